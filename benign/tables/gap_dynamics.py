"""The gap-dynamics table: in the benign band, does g of the clean samples' attention gap grow
linearly in the steps, as the theory's clock says, and how does r fall (docs/regimes.md#dynamics)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis import gap_growth
from benign.tables.common import MISSING, PathLike, _markdown_table, write


def _median_iqr(values: pd.Series, digits: int = 3) -> str:
    v = values.dropna().to_numpy(float)
    if not len(v):
        return MISSING
    q1, q2, q3 = np.quantile(v, [0.25, 0.5, 0.75])
    return f"{q2:.{digits}f} [{q1:.{digits}f}, {q3:.{digits}f}]"


def gap_dynamics(runs: pd.DataFrame, labels: pd.DataFrame, curves: pd.DataFrame, stem: PathLike) -> pd.DataFrame:
    """Per benign-band run and horizon (CSV): the linear fit of g(Lambda + log T) on the steps
    (slope, R^2), the local exponent of g's growth and the local slope of log r over the last
    decade; in the Markdown, their medians per horizon and n, and the regression of log g-slope
    on log ||mu||, log d and log n. ``runs`` and ``labels`` from benign.analysis.theory.atlas_view."""
    growth = gap_growth.benign_growth(runs, curves, labels)
    summary = pd.DataFrame(
        [
            {
                "Horizon": int(h),
                "n": int(n),
                "Benign runs (saturated)": f"{len(g)} ({int(g['saturated'].sum())})",
                "R^2 of g on steps: median [IQR]": _median_iqr(g["g_r2"]),
                "local exponent of g - g(0): median [IQR]": _median_iqr(g["g_exponent"]),
                "local slope of log r on log steps: median [IQR]": _median_iqr(g["r_slope"]),
            }
            for (h, n), g in growth.groupby(["horizon", "n"])
        ]
    )
    regression = gap_growth.slope_regression(growth)
    shown = regression.assign(
        **{
            "coefficient [95%, clustered by line-seed]": [
                f"{r.coef:.3g} [{r.low:.3g}, {r.high:.3g}]" for r in regression.itertuples()
            ]
        }
    )[["horizon", "term", "coefficient [95%, clustered by line-seed]", "runs", "clusters"]]
    header = [
        "## Synthetic data: the attention gap's clock in the benign band",
        "Lambda: the relevant token's logit minus the log-sum-exp of the other tokens', on the clean training "
        "samples; g(x) = 2x + 2 sinh(x - log T) at x = Lambda + log T, the gap of s = e^x / (e^x + T); the trainer "
        "logs the mean of g over the clean samples at each logged step. The theory's clock: g grows linearly in the "
        "steps while the drive on the relevant token is constant (local exponent 1). Runs: those in the benign band "
        "at the horizon (their flipped labels fitted, attention selecting at test time); saturated: the mean Lambda "
        "reached 30, where the weights off the relevant token are at the machine's precision and g no longer a clock "
        "(left out of the statistics). Local exponents and slopes: "
        "OLS of the logs over the logged steps of the last decade before the horizon. A constant drive would make "
        "the attention left off the relevant token, and with it r, fall like 1/steps (slope -1).",
    ]
    footer = [
        "### How the clock's rate depends on ||mu||, d and n",
        "OLS of log(slope of g on steps) on log ||mu||, log d and log n over the benign runs of each horizon, "
        "standard errors clustered by (d, n, seed) line-seed.",
        _markdown_table(shown) if len(shown) else "No horizon has enough benign runs to fit.",
    ]
    write(growth, summary, header, stem, footer)
    return growth
