"""The gap-dynamics table: for the runs heading for the benign regime, does g of the attention gap grow linearly in the
steps, as the theory's clock says, for the clean training samples and for the test samples (the
signal's part), is the signal's drive lr ||mu||^2, and how does r fall (docs/regimes.md#dynamics)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis import gap_growth
from benign.analysis.equivalence import verdict
from benign.synthetic import spec
from benign.tables.common import MISSING, PathLike, markdown_table, write


def _median_iqr(values: pd.Series, digits: int = 3) -> str:
    v = values.dropna().to_numpy(float)
    if not len(v):
        return MISSING
    q1, q2, q3 = np.quantile(v, [0.25, 0.5, 0.75])
    return f"{q2:.{digits}f} [{q1:.{digits}f}, {q3:.{digits}f}]"


CLOCK_MARGIN = 0.1  # the equivalence margin of the clock's exponents and of the drive's coefficients
# the theory's drive on the signal's part of the gap, per step at the atlas's fixed step size
# (lr = step_size / (sigma^2 d)): lr ||mu||^2, so log(slope of test g) ~ 2 log ||mu|| - log d
DRIVE = {"log ||mu||": 2.0, "log d": -1.0, "log n": 0.0}


def _exponents(growth: pd.DataFrame) -> pd.DataFrame:
    """Per horizon and gap (clean training samples, test samples): the mean local exponent of g
    with its interval over lines, and its word against 1 (a linear clock)."""
    rows = []
    for column, which in (("g_exponent", "clean training samples"), ("g_test_exponent", "test samples (signal)")):
        for r in gap_growth.mean_exponent(growth, column).itertuples():
            rows.append({"Horizon": r.horizon, "Gap of the": which,
                         "Mean local exponent of g - g(0) [95%, by line]": f"{r.mean:.3f} [{r.low:.3f}, {r.high:.3f}]",
                         f"Against 1 (± {CLOCK_MARGIN:g})": verdict(r.low, r.high, 1.0, CLOCK_MARGIN),
                         "Runs (lines)": f"{r.runs} ({r.lines})"})  # fmt: skip
    return pd.DataFrame(rows)


def _regressions(growth: pd.DataFrame) -> pd.DataFrame:
    """The regressions of log g-slope on log ||mu||, log d and log n, for both gaps, the test
    samples' against the theory's drive (:data:`DRIVE`)."""
    rows = []
    for column, which in (("g_slope", "clean training samples"), ("g_test_slope", "test samples (signal)")):
        for r in gap_growth.slope_regression(growth, column).itertuples():
            theory = DRIVE.get(r.term) if column == "g_test_slope" else None
            rows.append({"horizon": r.horizon, "gap of the": which, "term": r.term,
                         "coefficient [95%, clustered by line]": f"{r.coef:.3g} [{r.low:.3g}, {r.high:.3g}]",
                         "theory's drive": MISSING if theory is None else
                         f"{theory:g}: {verdict(r.low, r.high, theory, CLOCK_MARGIN)}",
                         "runs (lines)": f"{r.runs} ({r.clusters})"})  # fmt: skip
    return pd.DataFrame(rows)


def gap_dynamics(runs: pd.DataFrame, labels: pd.DataFrame, curves: pd.DataFrame, stem: PathLike) -> pd.DataFrame:
    """Per benign-band run and horizon (CSV): the linear fit of g(Lambda + log T) on the steps
    (slope, R^2) and the local exponent of g's growth over the last decade, for the clean
    training samples and the test samples, and the local slope of log r; in the Markdown, the
    mean exponents with their intervals over lines and words against a linear clock, their
    medians per n, and the regressions of log g-slope on log ||mu||, log d and log n, the test
    samples' against the theory's drive. ``runs`` and ``labels`` from benign.analysis.theory.atlas_view."""
    growth = gap_growth.benign_growth(runs, curves, labels)
    summary = pd.DataFrame(
        [
            {
                "Horizon": int(h),
                "n": int(n),
                "Benign runs (saturated)": f"{len(g)} ({int(g['saturated'].sum())})",
                "R^2 of g on steps: median [IQR]": _median_iqr(g["g_r2"]),
                "local exponent of g - g(0): median [IQR]": _median_iqr(g["g_exponent"]),
                "the same, test samples": _median_iqr(g["g_test_exponent"]),
                "local slope of log r on log steps: median [IQR]": _median_iqr(g["r_slope"]),
            }
            for (h, n), g in growth.groupby(["horizon", "n"])
        ]
    )
    exponents, regressions = _exponents(growth), _regressions(growth)
    header = [
        "## Synthetic data: the attention gap's clock on the way to the benign regime",
        f"The runs' fixed parameters: {spec.fixed_text(runs)}.",
        "Lambda: the relevant token's logit minus the log-sum-exp of the other tokens'; g(x) = 2x + 2 sinh(x - log T) "
        "at x = Lambda + log T, the gap of s = e^x / (e^x + T); the trainer logs the mean of g over the clean training "
        "samples and over the test samples at each logged step. A test sample's gap holds no memorised noise of its "
        "own: it is the signal's part, which the theory drives at lr ||mu||^2 per step. The theory's clock: g grows "
        "linearly in the steps while the drive is constant (local exponent 1). On a log-spaced schedule a high R^2 of "
        "g on steps cannot tell a linear clock from a power 0.7 or 1.5, so the clock is judged by the local exponent "
        "(OLS of log(g - g(0)) on log steps over the last decade before the horizon), averaged per (d, n) line, its "
        "mean over the lines with a 95% interval (Student's t on G - 1), and words against 1 with a margin of "
        f"±{CLOCK_MARGIN:g}: 'agrees' where the whole interval lies within it, 'departs' where the whole interval lies outside it, "
        "'cannot tell' between. Runs: "
        "those heading for the benign regime, their flipped labels fitted and their hard-max readout selecting at "
        "the longest horizon, the same runs at every horizon (a sample chosen by r, whose value is set by how fast "
        "the gap grew, would select on the clock's own speed); saturated: a mean Lambda of 30, where the weights off "
        "the relevant token are at the machine's precision (left out of the statistics).",
        markdown_table(exponents) if len(exponents) else "No horizon has enough benign runs.",
        "### Per n: medians [IQR]",
    ]
    footer = [
        "### How the clock's rate depends on ||mu||, d and n",
        "OLS of log(slope of g on steps) on log ||mu||, log d and log n over those runs at each horizon, standard "
        "errors clustered by (d, n) line (Student's t on G - 1: d and n vary only between lines); for the test "
        "samples' gap, against the theory's drive at the atlas's fixed step size, lr ||mu||^2 with lr = step_size / d: "
        f"2, -1 and 0 (words with a margin of ±{CLOCK_MARGIN:g}). Where the local exponent is not 1, the slope of g on "
        "a log-spaced schedule is an average rate, not the clock's constant: read these as how the average rate "
        "scales.",
        markdown_table(regressions) if len(regressions) else "No horizon has enough benign runs to fit.",
    ]
    write(growth, summary, header, stem, footer)
    return growth
