"""The dynamics the theory predicts, tested on the atlas's runs (docs/regimes.md#dynamics).

For the clean training samples, Lambda(tau) is the relevant token's logit minus the log-sum-exp
of the others' (benign.synthetic.selection.attention_gap), and the trainer logs the mean
g(Lambda + log T) over them (benign.synthetic.clock.g). The theory's clock says g grows linearly
in the steps tau while the drive on the relevant token stays constant. For each run in the benign
band at a horizon (it fits its flipped labels and attention selects at test time), this module
fits g against tau (statsmodels OLS: slope and R^2), the local exponent of g's growth (the slope
of log(g - g(0)) on log tau over the last decade before the horizon: 1 is linear) and the local
slope of log r on log tau over the same decade (the normalised test loss r; -1 would follow a
constant drive); and regresses log of g's slope on log ||mu||, log d and log n, with standard
errors clustered by line-seed (the runs of one (d, n, seed) share their data).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

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
    """One run's g-clock statistics up to ``horizon`` from its logged curve: ``g_slope`` and
    ``g_r2`` of the linear fit of g on tau, ``g_exponent`` (local exponent of g - g(0)) and
    ``r_slope`` (local slope of log r), both over the last decade; ``saturated`` where the mean
    Lambda reaches :data:`SATURATED` (the statistics are then left empty)."""
    import statsmodels.api as sm

    curve = curve[curve["step"] <= horizon].sort_values("step")
    t, g = curve["step"].to_numpy(float), curve["train_clean_g"].to_numpy(float)
    ok = np.isfinite(g)
    saturated = bool(np.nanmax(curve["train_clean_lambda"].to_numpy(float), initial=-np.inf) >= SATURATED)
    out = {"g_slope": np.nan, "g_r2": np.nan, "g_exponent": np.nan, "r_slope": np.nan, "points": int(ok.sum()),
           "saturated": saturated}  # fmt: skip
    if saturated:
        return out
    if ok.sum() >= 3:
        ols = sm.OLS(g[ok], sm.add_constant(t[ok])).fit()
        out["g_slope"], out["g_r2"] = float(ols.params[1]), float(ols.rsquared)
    late = t > horizon / DECADE
    out["g_exponent"] = _local_slope(t[late], g[late] - g[0])
    out["r_slope"] = _local_slope(t[late], curve["test_loss_normalised"].to_numpy(float)[late])
    return out


def benign_growth(runs: pd.DataFrame, curves: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """Per horizon, every run in the benign band there (labels ``overfits`` and ``selects`` of
    benign.analysis.theory.regimes_at), with :func:`run_growth` and its d, n, ||mu||, seed."""
    band = labels[labels["overfits"].astype(bool) & labels["selects"].astype(bool)]
    by_run = dict(tuple(curves[curves["run_id"].isin(band["run_id"])].groupby("run_id")))
    info = runs.drop_duplicates("run_id").set_index("run_id")
    rows = []
    for run_id, horizon in zip(band["run_id"], band["horizon"]):
        r = info.loc[run_id]
        rows.append({"run_id": run_id, "horizon": int(horizon), "d": r["d"], "n": r["n"], "signal_norm": r["signal_norm"],
                     "seed": r["seed"], **run_growth(by_run[run_id], int(horizon))})  # fmt: skip
    columns = ["run_id", "horizon", "d", "n", "signal_norm", "seed", "g_slope", "g_r2", "g_exponent", "r_slope", "points",
               "saturated"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def slope_regression(growth: pd.DataFrame) -> pd.DataFrame:
    """Per horizon: log g_slope = c + p log ||mu|| + q log d + s log n by OLS, standard errors
    clustered by (d, n, seed) line-seed; rows (horizon, term, coef, low, high, runs, clusters)."""
    import statsmodels.api as sm

    rows = []
    for horizon, at in growth[growth["g_slope"] > 0].groupby("horizon"):
        X = pd.DataFrame({"log ||mu||": np.log(at["signal_norm"].astype(float)),
                          "log d": np.log(at["d"].astype(float)), "log n": np.log(at["n"].astype(float))})  # fmt: skip
        X = X.loc[:, X.nunique() > 1]
        groups = at.groupby(["d", "n", "seed"]).ngroup().to_numpy()
        if len(at) <= X.shape[1] + 2 or len(np.unique(groups)) < 3:
            continue
        fit = sm.OLS(np.log(at["g_slope"].to_numpy(float)), sm.add_constant(X)).fit(
            cov_type="cluster", cov_kwds={"groups": groups}
        )
        ci = fit.conf_int(alpha=0.05)
        for term in fit.params.index:
            rows.append({"horizon": int(horizon), "term": term, "coef": float(fit.params[term]),
                         "low": float(ci.loc[term, 0]), "high": float(ci.loc[term, 1]), "runs": len(at),
                         "clusters": int(len(np.unique(groups)))})  # fmt: skip
    return pd.DataFrame(rows, columns=["horizon", "term", "coef", "low", "high", "runs", "clusters"])
