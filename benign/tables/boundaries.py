"""The regime-boundaries table: fitted exponents and constants with their intervals, beside the
theory's (docs/regimes.md#fitted-boundaries)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign import boundaries
from benign.tables.common import MISSING, PathLike, write

# (label, regime, the theory's exponent of d, of n): ||mu|| = c1 sqrt(d / n) and ||mu|| = c2 d^(1/4)
BOUNDARIES = (("not overfitting", "not_overfitting", 0.5, -0.5), ("harmful", "harmful", 0.25, 0.0))
PARAMS = ("c", "a", "b")
AGREEMENT_LEVEL = 0.9  # a fit describes its cells when at least this share on its side is in the regime


def regime_boundaries(
    runs: pd.DataFrame, labels: pd.DataFrame, stem: PathLike, criteria: str, draws: int = 200
) -> pd.DataFrame:
    """One row per (boundary, horizon): ||mu||* = c d^a n^b fitted to the transitions along
    ||mu|| of the seeds' labels at that horizon (``runs`` and ``labels`` from
    benign.theory.atlas_labels; ``criteria`` says how they were labelled), with bootstrap
    intervals over the seeds (benign.boundaries). An exponent the sweeps cannot tell (their d or
    n takes one value) is left empty."""
    cells = labels.merge(runs[["run_id", "d", "n", "signal_norm", "seed"]], on="run_id")
    rows = []
    for label, regime, theory_a, theory_b in BOUNDARIES:
        for horizon, at in cells.groupby("horizon"):
            at = at.assign(inside=at["regime"] == regime)
            points = boundaries.transitions(at, "inside")
            row = {
                "boundary": label,
                "horizon": int(horizon),
                "transitions": len(points),
                "seeds": at["seed"].nunique(),
            }
            row.update({f"{p}{part}": np.nan for p in PARAMS for part in ("", "_low", "_high")}, c_theory=np.nan)
            row.update(agreement=np.nan, cells_on_side=0)
            if len(points):  # the constant with the theory's exponents, for the theory's curve
                resid = np.log(points["mu_star"]) - theory_a * np.log(points["d"]) - theory_b * np.log(points["n"])
                row["c_theory"] = float(np.exp(resid.mean()))
            if len(points) >= 2:
                fit = boundaries.bootstrap(at, "inside", draws=draws)
                # not overfitting lies above its boundary, harmful below its own
                row["agreement"], row["cells_on_side"] = boundaries.agreement(
                    at, "inside", fit["fit"], regime != "harmful"
                )
                for p in PARAMS:
                    row[p] = getattr(fit["fit"], p)
                    row[f"{p}_low"], row[f"{p}_high"] = fit[p] if fit[p] is not None else (np.nan, np.nan)
            rows.append({**row, "theory_a": theory_a, "theory_b": theory_b})
    table = pd.DataFrame(rows)
    sweeps, horizons = sorted(runs["setting"].unique()), sorted(labels["horizon"].unique())
    header = _header(sweeps, horizons, criteria, draws)
    poor = table[table["agreement"] < AGREEMENT_LEVEL]
    if len(poor):
        where = "; ".join(f"{r.boundary} at {r.horizon} steps ({r.agreement:.0%})" for r in poor.itertuples())
        header.append(
            f"**Where the power law does not describe the cells** (under {AGREEMENT_LEVEL:.0%} of the cells on the "
            f"regime's side in the regime): {where}. There the labels along ||mu|| are not one transition; "
            "results/figures/regime_map shows which cells break it."
        )
    write(table, _display(table), header, stem)
    return table


def _interval(row: pd.Series, p: str) -> str:
    if row[p] is None or not np.isfinite(row[p]):
        return MISSING
    low, high = row[f"{p}_low"], row[f"{p}_high"]
    return f"{row[p]:.3g} [{low:.3g}, {high:.3g}]" if np.isfinite(low) else f"{row[p]:.3g}"


def _display(table: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Horizon (steps)": table["horizon"],
            "Transitions fitted": table["transitions"],
            "c": [_interval(r, "c") for _, r in table.iterrows()],
            "a (exponent of d)": [_interval(r, "a") for _, r in table.iterrows()],
            "theory a": table["theory_a"].map(lambda v: f"{v:g}"),
            "b (exponent of n)": [_interval(r, "b") for _, r in table.iterrows()],
            "theory b": table["theory_b"].map(lambda v: f"{v:g}"),
            "c with the theory's exponents": table["c_theory"].map(lambda v: f"{v:.3g}" if np.isfinite(v) else MISSING),
            "Cells on the regime's side in it": [
                f"{r['agreement']:.0%} of {r['cells_on_side']}" if np.isfinite(r["agreement"]) else MISSING
                for _, r in table.iterrows()
            ],
        }
    )


def criteria_text(fit_threshold: float, test_threshold: float) -> str:
    """How a run at a horizon is labelled, in words, for the table's header."""
    return (f"not overfitting if under a fraction {fit_threshold:g} of the flipped labels is fitted, harmful if they "
            f"are and test accuracy is under {test_threshold:g}")  # fmt: skip


def _header(sweeps, horizons, criteria: str, draws: int) -> list[str]:
    return [
        "## Synthetic data: fitted regime boundaries",
        f"The boundary ||mu||* = c d^a n^b between regimes, fitted to the runs of the sweeps {', '.join(sweeps)} "
        f"at horizons {', '.join(str(h) for h in horizons)} steps. At each (d, n), a logistic curve in log ||mu|| is "
        f"fitted to the seeds' labels (the regime of the last logged step at or before the horizon; {criteria}), "
        "and its midpoint is the transition ||mu||*; c, a and b are the least-squares "
        f"fit of log ||mu||* over the transitions. Brackets: 95% bootstrap intervals over the seeds ({draws} draws). The last column checks the fit against the cells: of the "
        "(d, n, ||mu||) cells on the regime's side of the fitted boundary (above it for not overfitting, below it for "
        "harmful), the share whose seeds are mostly in that regime. "
        "Theory (Theorem 4.1): not overfitting above ||mu|| ~ sqrt(d / n) (a = 1/2, b = -1/2), harmful below "
        "||mu|| ~ d^(1/4) (a = 1/4, no n). These are asymptotic statements: a finite horizon and finite d, n give "
        "the fitted numbers, which say where and how far the paper's scaling holds.",
    ]
