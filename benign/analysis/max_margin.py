"""The attention-SVM check's numbers (docs/max_margin.md): per (model, setting, horizon) the seed
means of the cosine to the max-margin direction, the selections and the margins; per setting the
rate at which 1 - cos shrinks, as a power of log t and of t. benign.tables.max_margin words them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import linregress


def horizon_rows(frame: pd.DataFrame, horizons) -> pd.DataFrame:
    """Per (model, setting, horizon): the last logged step at or before the horizon, and over
    seeds the mean (and range) of the cosine, the margin ratio, the selections, the margins, and
    the step after which no seed's selection changed again."""
    rows = []
    for (model, setting), runs in frame.groupby(["model", "setting"], sort=False):
        for horizon in horizons:
            at = runs[runs["step"] <= horizon]
            last = at[at["step"] == at["step"].max()]
            stable = at.groupby("seed")[["step", "selection_changed"]].apply(_stable_since)
            rows.append(
                dict(
                    model=model,
                    setting=setting,
                    d=int(last["d"].iloc[0]),
                    signal_norm=float(last["signal_norm"].iloc[0]),
                    seeds=len(last),
                    horizon=int(horizon),
                    step=int(last["step"].iloc[0]),
                    cosine=last["cosine"].mean(),
                    cosine_min=last["cosine"].min(),
                    cosine_max=last["cosine"].max(),
                    cosine_random=last["cosine_random"].mean(),
                    cosine_early=last["cosine_early"].mean(),
                    cosine_relevant=last["cosine_relevant"].mean(),
                    locally_optimal=last["locally_optimal"].mean(),
                    margin_ratio=last["margin_ratio"].mean(),
                    train_loss=last["train_loss"].mean(),
                    clean_signal=last["clean_signal"].mean(),
                    noisy_signal=last["noisy_signal"].mean(),
                    noisy_opposite=last["noisy_opposite"].mean(),
                    noisy_noise=last["noisy_noise"].mean(),
                    noisy_agrees=last["noisy_agrees"].mean(),
                    min_margin_clean=last["min_margin_clean"].mean(),
                    min_margin_noisy=last["min_margin_noisy"].mean(),
                    selection_stable_since=int(stable.max()),
                    test_err_hardmax=last["test_err_hardmax"].mean(),
                    test_err_svm=last["test_err_svm"].mean(),
                    limit_gap_max=(last["test_err_hardmax"] - last["test_err_svm"]).abs().max(),
                    test_svm_agreement=last["test_svm_agreement"].mean(),
                )  # fmt: skip
            )
    return pd.DataFrame(rows)


def _stable_since(run: pd.DataFrame) -> int:
    """The logged step after which the selection never changes again (0: it never changed)."""
    changed = run.loc[run["selection_changed"].astype(bool), "step"]
    return int(changed.max()) if len(changed) else 0


RATE_FROM = 100  # the rate fits read 1 - cos from this step on (three decades to a horizon of 10^5)


def rate_fits(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (model, setting): the seed-mean 1 - cos from step ``RATE_FROM`` on, fitted by least
    squares in log(1 - cos) as a power of log t, A (log t)^-g (their single-input example: g = 2),
    and as a power law A t^-beta; each with its exponent, standard error and residual RMS, and
    the decades of steps fitted."""
    rows = []
    for (model, setting), runs in frame.groupby(["model", "setting"], sort=False):
        mean = runs[runs["step"] >= RATE_FROM].groupby("step")["cosine"].mean()
        gap = 1 - mean
        keep = gap > 0
        if keep.sum() < 3:
            continue
        t, y = mean.index[keep].to_numpy(float), np.log(gap[keep].to_numpy())
        row = {"model": model, "setting": setting, "decades": float(np.log10(t.max() / t.min())), "points": len(t)}
        for name, x in (("log", np.log(np.log(t))), ("power", np.log(t))):
            fit = linregress(x, y)
            resid = y - (fit.intercept + fit.slope * x)
            row.update({f"{name}_exponent": -fit.slope, f"{name}_se": fit.stderr,
                        f"{name}_rms": float(np.sqrt(np.mean(resid**2)))})  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)
