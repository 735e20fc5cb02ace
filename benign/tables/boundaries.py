"""The regime-boundaries table: one maximum-likelihood fit per boundary and horizon over every
atlas run, with profile-likelihood intervals and the theory's value beside each exponent
(docs/regimes.md#fitted-boundaries)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis import boundaries
from benign.analysis.theory import Criteria
from benign.config import SWEEP_SEP
from benign.tables.common import MISSING, PathLike, write

# (name, the label column of benign.analysis.theory.regimes_at whose True side lies above the boundary,
# whether that column is negated, the theory's exponent of d, of n): not overfitting above
# ||mu|| ~ sqrt(d / n); attention selects at test time above ||mu|| ~ d^(1/4) (harmful below).
BOUNDARIES = (
    ("not overfitting", "overfits", True, 0.5, -0.5),
    ("selection (harmful below)", "selects", False, 0.25, 0.0),
)
PARAMS = ("c", "k", "a", "b", "e")


def verdict(low: float, high: float, theory: float) -> str:
    """Words that follow an interval: "departs" where it excludes the theory's value, "agrees"
    where it holds it and is closed (and, for a non-zero value, excludes 0, the law without
    that axis), else "cannot tell"."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "cannot tell"
    if not low <= theory <= high:
        return "departs"
    if theory != 0 and low <= 0 <= high:
        return "cannot tell"
    return "agrees"


def side_labels(labels: pd.DataFrame, runs: pd.DataFrame, column: str, negate: bool) -> pd.DataFrame:
    """The runs' (d, n, signal_norm, seed) with the boolean ``side`` of one boundary, per horizon."""
    cells = labels.merge(runs[["run_id", "d", "n", "signal_norm", "seed"]], on="run_id")
    side = cells[column].astype(bool)
    return cells.assign(side=~side if negate else side)


def resolution(cells: pd.DataFrame, fit: boundaries.Boundary) -> tuple[float, float]:
    """How finely the runs locate the fitted boundary: over the (d, n) lines whose sampled norms
    bracket it, the median and the largest ratio between the two norms that do; NaN where no
    line brackets it."""
    ratios = []
    for (d, n), line in cells.groupby(["d", "n"]):
        norms = np.sort(line["signal_norm"].unique())
        star = float(fit.mu_star(d, n))
        below, above = norms[norms <= star], norms[norms > star]
        if len(below) and len(above):
            ratios.append(above[0] / below[-1])
    return (float(np.median(ratios)), float(max(ratios))) if ratios else (np.nan, np.nan)


def regime_boundaries(runs: pd.DataFrame, labels: pd.DataFrame, stem: PathLike, criteria: Criteria | str,
                      resolution_limit: float, interaction: bool = True) -> pd.DataFrame:  # fmt: skip
    """One row per (boundary, horizon): ||mu||* = c d^a n^b [d^(e log n)] and the steepness k,
    fitted to the labels of every run at that horizon (``runs`` and ``labels`` from
    benign.analysis.theory.atlas_labels; ``criteria`` says how they were labelled), with 95% profile
    intervals, the held-out log-loss (one (d, n) line left out at a time) of the fit and of the
    theory's exponents, and the verdict on each exponent. ``resolution_limit``: the finest
    factor in ||mu|| the runs resolve (it caps k, benign.analysis.boundaries). With ``interaction``, a
    second fit adds e log d log n and reports e (a test of the product form c d^a n^b)."""
    criteria = criteria if isinstance(criteria, str) else criteria_text(criteria)
    k_max = boundaries.k_max_for(resolution_limit)
    rows = []
    for name, column, negate, theory_a, theory_b in BOUNDARIES:
        for horizon, at in labels.groupby("horizon"):
            cells = side_labels(at, runs, column, negate)
            row = {"boundary": name, "horizon": int(horizon), "runs": len(cells), "seeds": cells["seed"].nunique(),
                   "lines": cells.groupby(["d", "n"]).ngroups, "share_on_side": float(cells["side"].mean()),
                   "theory_a": theory_a, "theory_b": theory_b}  # fmt: skip
            row.update({f"{p}{part}": np.nan for p in PARAMS for part in ("", "_low", "_high")})
            fit = boundaries.fit(cells, "side", k_max)
            if fit is not None:
                for p in ("c", "k", "a", "b"):
                    if fit.estimates[p] is not None:
                        row[p] = fit.estimates[p]
                        row[f"{p}_low"], row[f"{p}_high"] = fit.intervals[p]
                both = boundaries.fit(cells, "side", k_max, interaction=True) if interaction else None
                if both is not None and both.estimates["e"] is not None:
                    row["e"], (row["e_low"], row["e_high"]) = both.estimates["e"], both.intervals["e"]
                theory = boundaries.fit(cells, "side", k_max, intervals=False, fixed={"a": theory_a, "b": theory_b})
                row["c_theory"] = theory.estimates["c"] if theory is not None else np.nan
                row["k_capped"] = bool(fit.estimates["k"] >= k_max * (1 - 1e-6))
                row["resolution"], row["resolution_max"] = resolution(cells, fit)
                row["heldout_log_loss"] = boundaries.held_out_log_loss(cells, "side", k_max)
                row["heldout_log_loss_theory"] = boundaries.held_out_log_loss(
                    cells, "side", k_max, {"a": theory_a, "b": theory_b}
                )
            p = cells["side"].mean()
            row["base_log_loss"] = float(-(p * np.log(p) + (1 - p) * np.log(1 - p))) if 0 < p < 1 else 0.0
            for axis, theory in (("a", theory_a), ("b", theory_b)):
                row[f"{axis}_verdict"] = (
                    verdict(row[f"{axis}_low"], row[f"{axis}_high"], theory) if np.isfinite(row[axis]) else "not fitted"
                )
            rows.append(row)
    table = pd.DataFrame(rows)
    for column in (
        "c_theory",
        "k_capped",
        "resolution",
        "resolution_max",
        "heldout_log_loss",
        "heldout_log_loss_theory",
    ):
        if column not in table:
            table[column] = np.nan
    sweeps = sorted({name for setting in runs["setting"] for name in str(setting).split(SWEEP_SEP)})
    horizons = sorted(labels["horizon"].unique())
    write(table, _display(table), _header(sweeps, horizons, criteria, resolution_limit, k_max), stem)
    return table


def _interval(row: pd.Series, p: str, digits: int = 3) -> str:
    if not np.isfinite(row[p]):
        return MISSING
    low, high = (f"{row[f'{p}_{s}']:.{digits}g}" if np.isfinite(row[f"{p}_{s}"]) else "open" for s in ("low", "high"))
    return f"{row[p]:.{digits}g} [{low}, {high}]"


def _display(table: pd.DataFrame) -> pd.DataFrame:
    rows = [r for _, r in table.iterrows()]

    def loss(v):
        return f"{v:.3f}" if np.isfinite(v) else MISSING

    return pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Horizon (steps)": table["horizon"],
            "Runs (lines)": [f"{r['runs']} ({r['lines']})" for r in rows],
            "c": [_interval(r, "c") for r in rows],
            "k": [_interval(r, "k") + (" (at the cap)" if r.get("k_capped") is True else "") for r in rows],
            "a (exponent of d)": [_interval(r, "a") for r in rows],
            "theory a": [f"{r['theory_a']:g}: {r['a_verdict']}" for r in rows],
            "b (exponent of n)": [_interval(r, "b") for r in rows],
            "theory b": [f"{r['theory_b']:g}: {r['b_verdict']}" for r in rows],
            "e (log d log n)": [_interval(r, "e") for r in rows],
            "c with the theory's a, b": [
                f"{r['c_theory']:.3g}" if np.isfinite(r["c_theory"]) else MISSING for r in rows
            ],
            "Resolution in ||mu||: median (widest)": [
                f"x{r['resolution']:.3g} (x{r['resolution_max']:.3g})" if np.isfinite(r["resolution"]) else MISSING
                for r in rows
            ],
            "Held-out log-loss: fit / theory's a, b / base rate": [
                f"{loss(r['heldout_log_loss'])} / {loss(r['heldout_log_loss_theory'])} / {loss(r['base_log_loss'])}"
                for r in rows
            ],
        }
    )


def _header(sweeps, horizons, criteria: str, resolution_limit: float, k_max: float) -> list[str]:
    return [
        "## Synthetic data: fitted regime boundaries",
        f"Each row fits P(side) = sigmoid(k (log ||mu|| - log c - a log d - b log n)) by maximum likelihood to the "
        f"labels of every run of the sweeps {', '.join(sweeps)} that reached the horizon ({', '.join(map(str, horizons))} "
        f"steps), each run once. Labels ({criteria}) are read at the last logged step at or before the horizon. "
        "Brackets: 95% profile-likelihood intervals ('open': the data do not close that side). k is capped at "
        f"{k_max:.3g}, a transition from 10% to 90% across a factor {resolution_limit:.3g} in ||mu||, the finest the "
        "runs claim to resolve; at the cap the labels are separated and the intervals span every law that keeps them so. "
        "e: the coefficient of log d log n in a second fit, 0 when the boundary is a product c d^a n^b. Resolution: "
        "over the (d, n) lines, the median (and widest) ratio between the two sampled norms that bracket the fitted "
        "boundary (the refinement samples a factor 2^(1/8) = 1.09 around each line's own transition). Held-out "
        "log-loss: each (d, n) line predicted by the fit to the others, beside the same with a and b held at the "
        "theory's values and beside the base rate's entropy (no boundary).",
        "Theory (Theorem 4.1): not overfitting above ||mu|| ~ sqrt(d / n) (a = 1/2, b = -1/2); harmful below "
        "||mu|| ~ d^(1/4) (a = 1/4, b = 0). Words: 'agrees' where the interval holds the theory's value (and, for a "
        "non-zero value, excludes 0), 'departs' where it excludes it, 'cannot tell' otherwise. These are asymptotic "
        "statements: finite d, n and horizon give the fitted numbers.",
    ]


def criteria_text(criteria) -> str:
    """How a run at a horizon is labelled (a benign.analysis.theory.Criteria), in words, for the table's header."""
    return (f"not overfitting if under a fraction {criteria.fit_threshold:g} of the flipped labels is fitted; "
            f"attention selects if the normalised test loss r is at most {criteria.loss_threshold:g}")  # fmt: skip


def regime_model(runs: pd.DataFrame, labels: pd.DataFrame, stem: PathLike, resolution_limit: float) -> pd.DataFrame:
    """The fitted model the regime predictor reads (benign.analysis.predictor): per boundary, horizon and
    (d, n) line of the atlas, the fitted boundary ||mu||* there with its 95% profile interval,
    beside the boundary's global c, a, b and k."""
    k_max = boundaries.k_max_for(resolution_limit)
    rows = []
    for name, column, negate, _, _ in BOUNDARIES:
        for horizon, at in labels.groupby("horizon"):
            cells = side_labels(at, runs, column, negate)
            fit = boundaries.fit(cells, "side", k_max, intervals=False)
            if fit is None:
                continue
            for (d, n), _line in cells.groupby(["d", "n"]):
                star, low, high = boundaries.mu_star_interval(cells, "side", k_max, d, n)
                rows.append({"boundary": name, "horizon": int(horizon), "d": int(d), "n": int(n), "mu_star": star,
                             "mu_star_low": low, "mu_star_high": high, "k": fit.estimates["k"], "c": fit.estimates["c"],
                             "a": _or_nan(fit.estimates["a"]), "b": _or_nan(fit.estimates["b"])})  # fmt: skip
    table = pd.DataFrame(rows, columns=["boundary", "horizon", "d", "n", "mu_star", "mu_star_low", "mu_star_high", "k",
                                        "c", "a", "b"])  # fmt: skip
    display = table.assign(
        **{
            "||mu||* [95%]": [
                f"{r.mu_star:.3g} [{_end(r.mu_star_low)}, {_end(r.mu_star_high)}]" for r in table.itertuples()
            ]
        }
    )[["boundary", "horizon", "d", "n", "||mu||* [95%]"]]
    header = [
        "## Synthetic data: the fitted regime model",
        "Per boundary, horizon and (d, n) line of the atlas: the boundary ||mu||* of the fit over every run at that "
        "horizon (results/tables/regime_boundaries), with its 95% profile-likelihood interval. "
        "`python -m benign regime` answers from this table.",
    ]
    write(table, display, header, stem)
    return table


def _or_nan(value) -> float:
    return float("nan") if value is None else float(value)


def _end(value: float) -> str:
    return f"{value:.3g}" if np.isfinite(value) else "open"
