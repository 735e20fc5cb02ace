"""The dynamics the theory predicts, tested on the atlas's runs (docs/regimes.md#dynamics).

For the clean training samples, Lambda(tau) is the relevant token's logit minus the log-sum-exp
of the others' (benign.synthetic.selection.attention_gap), and the trainer logs the mean
g(Lambda + log T) over them (benign.synthetic.clock.g). The theory's clock says g grows linearly
in the steps tau while the drive on the relevant token stays constant. For each run heading for
the benign regime (at the longest horizon its flipped labels are fitted and its hard-max readout
selects; the same runs at every horizon), this module
fits g against tau (statsmodels OLS: slope and R^2), the local exponent of g's growth (the slope
of log(g - g(0)) on log tau over the last decade before the horizon: 1 is linear) and the local
slope of log r on log tau over the same decade (the normalised test loss r; -1 would follow a
constant drive); for the clean training samples' g and for the test samples' (whose gap holds
no memorised noise of their own: the signal's part, whose drive the theory puts at lr ||mu||^2).
A high R^2 of g on tau cannot tell a linear clock from a power 0.7 or 1.5 on a log-spaced
schedule, so the clock is judged by the local exponent, averaged per (d, n) line with its
interval over the lines; and the slope of g is regressed on log ||mu||, log d and log n, standard
errors clustered by (d, n) line.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import t as student

DECADE = 10.0  # the local slopes read the logged steps in (horizon / DECADE, horizon]
# A mean Lambda this large means the softmax weights left off the relevant token are within a few
# machine epsilons of 0 (float64: Lambda is held under about 36): g is then the machine's limit,
# not the clock. Such runs are counted as saturated and left out of the fits.
SATURATED = 30.0


def _local_slope(t: np.ndarray, y: np.ndarray) -> float:
    """The OLS slope of log y on log t (NaN with under 3 positive points)."""
    ok = (t > 0) & (y > 0) & np.isfinite(y)
    if ok.sum() < 3:
        return float("nan")
    return float(np.polyfit(np.log(t[ok]), np.log(y[ok]), 1)[0])


def run_growth(curve: pd.DataFrame, horizon: int) -> dict:
    """One run's g-clock statistics up to ``horizon`` from its logged curve, for the clean
    training samples' g (``g_*``) and the test samples' (``g_test_*``: no memorised noise of their
    own, the signal's part of the gap): the slope and R^2 of the linear fit of g on tau, the local
    exponent of g - g(0) over the last decade; ``r_slope``, the local slope of log r there;
    ``saturated`` where the mean Lambda reaches :data:`SATURATED` (the statistics are then left
    empty)."""
    import statsmodels.api as sm

    curve = curve[curve["step"] <= horizon].sort_values("step")
    t = curve["step"].to_numpy(float)
    saturated = bool(np.nanmax(curve[["train_clean_lambda", "test_lambda"]].to_numpy(float), initial=-np.inf)
                     >= SATURATED)  # fmt: skip
    out = {"g_slope": np.nan, "g_r2": np.nan, "g_exponent": np.nan, "g_test_slope": np.nan, "g_test_exponent": np.nan,
           "r_slope": np.nan, "points": int(np.isfinite(curve["train_clean_g"]).sum()), "saturated": saturated}  # fmt: skip
    if saturated:
        return out
    late = t > horizon / DECADE
    for column, prefix in (("train_clean_g", "g"), ("test_g", "g_test")):
        g = curve[column].to_numpy(float)
        ok = np.isfinite(g)
        if ok.sum() >= 3:
            ols = sm.OLS(g[ok], sm.add_constant(t[ok])).fit()
            out[f"{prefix}_slope"] = float(ols.params[1])
            if prefix == "g":
                out["g_r2"] = float(ols.rsquared)
        out[f"{prefix}_exponent"] = _local_slope(t[late], g[late] - g[0])
    out["r_slope"] = _local_slope(t[late], curve["test_loss_normalised"].to_numpy(float)[late])
    return out


def benign_growth(runs: pd.DataFrame, curves: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """At every horizon, the runs heading for the benign regime at the longest: their flipped
    labels fitted and their hard-max readout selecting there (``overfits`` and
    ``selects_hardmax`` of benign.analysis.theory.regimes_at), the same runs at every horizon.
    The sample does not read r, whose value is set by how fast the gap grew: selecting on it
    would select on the clock's own speed. Each with :func:`run_growth` and its d, n, ||mu||, seed."""
    longest = labels[labels["horizon"] == labels["horizon"].max()]
    band = set(longest.loc[longest["overfits"].astype(bool) & longest["selects_hardmax"].astype(bool), "run_id"])
    at = labels[labels["run_id"].isin(band)]
    by_run = dict(tuple(curves[curves["run_id"].isin(band)].groupby("run_id")))
    info = runs.drop_duplicates("run_id").set_index("run_id")
    rows = []
    for run_id, horizon in zip(at["run_id"], at["horizon"]):
        r = info.loc[run_id]
        rows.append({"run_id": run_id, "horizon": int(horizon), "d": r["d"], "n": r["n"], "signal_norm": r["signal_norm"],
                     "seed": r["seed"], **run_growth(by_run[run_id], int(horizon))})  # fmt: skip
    columns = ["run_id", "horizon", "d", "n", "signal_norm", "seed", "g_slope", "g_r2", "g_exponent", "g_test_slope",
               "g_test_exponent", "r_slope", "points", "saturated"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def mean_exponent(growth: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per horizon: the mean of a local exponent (``column``) with its 95% interval, the runs
    averaged per (d, n) line first and the lines the units (Student's t on G - 1): the runs of a
    line share its (d, n), and the refinement crowds them near the band's edges, so counting
    runs would weigh those; rows (horizon, mean, low, high, runs, lines)."""
    rows = []
    for horizon, at in growth.dropna(subset=[column]).groupby("horizon"):
        lines = at.groupby(["d", "n"])[column].mean().to_numpy(float)
        if len(lines) < 3:
            continue
        mean, se = float(lines.mean()), float(lines.std(ddof=1) / np.sqrt(len(lines)))
        half = float(student.ppf(0.975, len(lines) - 1)) * se
        rows.append({"horizon": int(horizon), "mean": mean, "low": mean - half, "high": mean + half, "runs": len(at),
                     "lines": len(lines)})  # fmt: skip
    return pd.DataFrame(rows, columns=["horizon", "mean", "low", "high", "runs", "lines"])


def slope_regression(growth: pd.DataFrame, column: str = "g_slope") -> pd.DataFrame:
    """Per horizon: log(``column``, a slope of g on tau) = c + p log ||mu|| + q log d + s log n by
    OLS, standard errors clustered by (d, n) line (Student's t on G - 1: log d and log n vary
    only between the lines); rows (horizon, term, coef, low, high, runs, clusters)."""
    import statsmodels.api as sm

    rows = []
    for horizon, at in growth[growth[column] > 0].groupby("horizon"):
        X = pd.DataFrame({"log ||mu||": np.log(at["signal_norm"].astype(float)),
                          "log d": np.log(at["d"].astype(float)), "log n": np.log(at["n"].astype(float))})  # fmt: skip
        X = X.loc[:, X.nunique() > 1]
        groups = at.groupby(["d", "n"]).ngroup().to_numpy()
        if len(at) <= X.shape[1] + 2 or len(np.unique(groups)) < X.shape[1] + 2:
            continue
        fit = sm.OLS(np.log(at[column].to_numpy(float)), sm.add_constant(X)).fit(
            cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
        )
        ci = fit.conf_int(alpha=0.05)
        for term in fit.params.index:
            rows.append({"horizon": int(horizon), "term": term, "coef": float(fit.params[term]),
                         "low": float(ci.loc[term, 0]), "high": float(ci.loc[term, 1]), "runs": len(at),
                         "clusters": int(len(np.unique(groups)))})  # fmt: skip
    return pd.DataFrame(rows, columns=["horizon", "term", "coef", "low", "high", "runs", "clusters"])
