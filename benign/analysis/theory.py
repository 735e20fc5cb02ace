"""Theory (docs/regimes.md): SNR, the regime boundaries of Theorem 4.1, g(x) and the regime labels.

Regimes, by signal-to-noise ratio SNR = ||mu|| / (sigma sqrt(d)):
- not overfitting: SNR^2 = omega(1/n), above the curve ||mu|| = c1 sqrt(d / n);
- benign overfitting: between the two curves;
- harmful overfitting: SNR = o(d^{-1/4}), below the curve ||mu|| = c2 d^{1/4}.
The theorem fixes the curves only up to constants, so c1 and c2 are always passed in.

A run's regime at a step is read from what it does with its tokens (docs/regimes.md#labels):
overfitting when at least a fraction ``fit_threshold`` of its flipped labels is fitted, and, if
so, benign when attention selects the relevant token at test time (the normalised test loss r of
benign.synthetic.selection at most ``loss_threshold``), harmful otherwise. The fixed head's test accuracy
under uniform attention is Phi(||mu|| / (sigma sqrt(2T))) whatever d and n, so an accuracy
threshold cannot see the d^(1/4) boundary: that label is kept only as ``head_acc_regime``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

import numpy as np
import pandas as pd

from benign.analysis.convergence import step_convergence
from benign.synthetic.clock import g
from benign.synthetic.spec import snr

__all__ = [
    "REGIMES",
    "REGIME_LABELS",
    "snr",
    "boundary_not_overfitting",
    "boundary_harmful",
    "g",
    "Criteria",
    "classify_regimes",
    "head_acc_regimes",
    "assign_regimes",
    "regimes_at",
    "atlas_labels",
    "regime_fractions",
]

# the order figures and tables list them in; the config names one setting after each
# (benign.synthetic.spec.NAMED_SETTINGS, tests/analysis/test_theory.py)
REGIMES = ("harmful", "benign", "not_overfitting")
REGIME_LABELS = {
    "harmful": "Harmful overfitting",
    "benign": "Benign overfitting",
    "not_overfitting": "Not overfitting",
}
TOLERANCE = 1e-9  # accuracies are ratios of small integers; absorb float rounding


def boundary_not_overfitting(d, n: int, c1: float):
    """||mu|| = c1 sqrt(d / n): above it the model does not fit the flipped labels."""
    return c1 * np.sqrt(np.asarray(d, dtype=float) / n)


def boundary_harmful(d, c2: float):
    """||mu|| = c2 d^{1/4}: below it overfitting is harmful."""
    return c2 * np.asarray(d, dtype=float) ** 0.25


@dataclass(frozen=True)
class Criteria:
    """The thresholds of the labels: the config's ``synthetic.regime``, whose schema holds their
    defaults and bounds (``benign.plan.schema.default("synthetic.regime")`` reads them)."""

    fit_threshold: float  # fraction of flipped labels fitted: overfitting at or above it
    loss_threshold: float  # normalised test loss r: attention selects at or below it
    rate_threshold: float  # test selection rate: selects at or above it (models without r; the argmax label)
    head_acc_threshold: float  # the fixed head's test accuracy (the secondary label)
    hardmax_threshold: float  # the hard-max readout's test error: it generalizes at or below it


def overfits(train_acc_noisy, criteria: Criteria) -> np.ndarray:
    """Whether at least a fraction ``fit_threshold`` of the flipped labels is fitted (NaN: False)."""
    return np.asarray(train_acc_noisy, dtype=float) >= criteria.fit_threshold - TOLERANCE


def selects(test_loss_normalised, test_sel_relevant, criteria: Criteria) -> np.ndarray:
    """Whether attention selects the relevant token at test time: r <= ``loss_threshold`` where
    r is defined (the fixed-head models), else a test selection rate >= ``rate_threshold``."""
    r = np.asarray(test_loss_normalised, dtype=float)
    rate = np.asarray(test_sel_relevant, dtype=float)
    return np.where(
        np.isfinite(r), r <= criteria.loss_threshold + TOLERANCE, rate >= criteria.rate_threshold - TOLERANCE
    )


def selects_argmax(test_sel_relevant, criteria: Criteria) -> np.ndarray:
    """Whether the relevant token is the most attended on at least a fraction ``rate_threshold``
    of the test samples: the direction of attention, not its size (docs/regimes.md#labels), so it
    settles long before r does."""
    return np.asarray(test_sel_relevant, dtype=float) >= criteria.rate_threshold - TOLERANCE


def selects_hardmax(test_err_hardmax, criteria: Criteria) -> np.ndarray:
    """Whether the hard-max readout (each test sample reads its most-attended token only) has a
    test error at most ``hardmax_threshold``: the error the run heads for once its softmax
    saturates, the theorem's long-time test error (NaN, a model without a fixed head: False)."""
    return np.asarray(test_err_hardmax, dtype=float) <= criteria.hardmax_threshold + TOLERANCE


def _series(values: np.ndarray, like, name: str):
    for series in like:
        if isinstance(series, pd.Series):
            return pd.Series(values, index=series.index, name=name)
    return values


def classify_regimes(train_acc_noisy, test_loss_normalised, test_sel_relevant, criteria: Criteria):
    """The regime of each run (or logged step), from the fraction of flipped labels fitted and
    what attention selects at test time: "not_overfitting", "benign" or "harmful"; None where
    the inputs are not finite (a diverged run, no flipped label, no selection measured). A Series
    in gives a Series (same index) out, else an object array."""
    fit = np.asarray(train_acc_noisy, dtype=float)
    r = np.asarray(test_loss_normalised, dtype=float)
    rate = np.asarray(test_sel_relevant, dtype=float)
    fit, r, rate = np.broadcast_arrays(fit, r, rate)
    measured = np.isfinite(fit) & (np.isfinite(r) | np.isfinite(rate))
    regimes = np.select(
        [~measured, ~overfits(fit, criteria), selects(r, rate, criteria)],
        [None, "not_overfitting", "benign"],
        default="harmful",
    ).astype(object)
    return _series(regimes, (train_acc_noisy, test_loss_normalised, test_sel_relevant), "regime")


def head_acc_regimes(train_acc_noisy, test_acc, criteria: Criteria):
    """The secondary label, named for what it measures: overfitting as in :func:`classify_regimes`,
    then "benign" where the fixed head's test accuracy is at least ``head_acc_threshold``. It
    cannot depend on d (docs/regimes.md#why-accuracy-cannot-see-d): no boundary is fitted to it."""
    fit, test = np.broadcast_arrays(np.asarray(train_acc_noisy, dtype=float), np.asarray(test_acc, dtype=float))
    regimes = np.select(
        [~(np.isfinite(fit) & np.isfinite(test)), ~overfits(fit, criteria),
         test >= criteria.head_acc_threshold - TOLERANCE],
        [None, "not_overfitting", "benign"],
        default="harmful",
    ).astype(object)  # fmt: skip
    return _series(regimes, (train_acc_noisy, test_acc), "head_acc_regime")


def label_frame(frame: pd.DataFrame, criteria: Criteria):
    """:func:`classify_regimes` of a runs or curves frame's rows."""
    return classify_regimes(
        frame["train_acc_noisy"], frame["test_loss_normalised"], frame["test_sel_relevant"], criteria
    )


def assign_regimes(runs, criteria: Criteria):
    """Return a copy of a runs table with its ``regime`` and ``head_acc_regime`` columns under
    these thresholds (None unless status ok)."""
    runs = runs.copy()
    ok = runs["status"] == "ok"
    runs["regime"] = label_frame(runs, criteria).where(ok, None)
    runs["head_acc_regime"] = head_acc_regimes(runs["train_acc_noisy"], runs["test_acc"], criteria).where(ok, None)
    return runs


def regimes_at(curves: pd.DataFrame, horizons, criteria: Criteria) -> pd.DataFrame:
    """Each run's regime at each horizon, read from its logged curve: the label of its last
    logged step at or before the horizon (docs/regimes.md#labelling-a-finite-run). Returns
    run_id, horizon, step (the logged step used), regime and the binary labels the
    boundaries are fitted to: ``overfits``, ``selects``, ``selects_argmax`` and ``selects_hardmax``, with the
    values behind them, ``r``, ``err_hardmax`` and ``fit_noisy`` (the fraction of flipped labels
    fitted: benign.analysis.n_law reads each flipped sample's crossing from it); a horizon before a run's first logged step, or
    past its last, is left out."""
    curves = curves.sort_values(["run_id", "step"])
    last_step = curves.groupby("run_id")["step"].max()
    rows = []
    for horizon in horizons:
        upto = curves[(curves["step"] <= horizon) & (curves["run_id"].map(last_step) >= horizon)]
        last = upto.groupby("run_id", sort=False).tail(1)
        rows.append(
            pd.DataFrame(
                {
                    "run_id": last["run_id"].to_numpy(),
                    "horizon": int(horizon),
                    "step": last["step"].to_numpy(),
                    "regime": np.asarray(label_frame(last, criteria), dtype=object),
                    "overfits": overfits(last["train_acc_noisy"], criteria),
                    "selects": selects(last["test_loss_normalised"], last["test_sel_relevant"], criteria),
                    "selects_argmax": selects_argmax(last["test_sel_relevant"], criteria),
                    "selects_hardmax": selects_hardmax(last["test_err_hardmax"], criteria),
                    "r": last["test_loss_normalised"].to_numpy(float),
                    "err_hardmax": last["test_err_hardmax"].to_numpy(float),
                    "fit_noisy": last["train_acc_noisy"].to_numpy(float),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def in_sweeps(runs: pd.DataFrame, sweeps) -> pd.Series:
    """Whether each run belongs to one of ``sweeps`` (its ``sweeps`` list names it, alone or among
    the sweeps that share the run)."""
    wanted = set(sweeps)
    return runs["sweeps"].map(lambda names: bool(wanted & set(names)))


def ok_runs_of(runs: pd.DataFrame, sweeps) -> pd.DataFrame:
    """The finished runs (status ok) of ``sweeps`` (:func:`in_sweeps`), each once."""
    return runs[in_sweeps(runs, sweeps) & (runs["status"] == "ok")].drop_duplicates("run_id")


def atlas_labels(runs: pd.DataFrame, curves: pd.DataFrame, sweeps, horizons,
                 criteria: Criteria) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """The ok runs of the named sweeps, each once, and their labels at each horizon
    (:func:`regimes_at`): what the regime-boundaries table and the regime map both read."""
    runs = ok_runs_of(runs, sweeps)
    return runs, regimes_at(curves[curves["run_id"].isin(runs["run_id"])], horizons, criteria)


class AtlasView(TypedDict):
    """What :func:`atlas_view` gives."""

    runs: pd.DataFrame
    labels: pd.DataFrame
    criteria: Criteria
    curves: pd.DataFrame
    convergence: pd.DataFrame


class SweepsView(TypedDict):
    """What :func:`sweeps_view` gives."""

    runs: pd.DataFrame
    curves: pd.DataFrame


def atlas_view(runs: pd.DataFrame, curves: pd.DataFrame, settings, horizons, regime: dict,
               convergence: dict | None = None) -> AtlasView:  # fmt: skip
    """What the atlas's artifacts read (benign.artifacts): its ok runs, each once, their
    labels at each horizon, the criteria they were labelled by (``synthetic.regime``), their
    curves, and the step check of the longest horizon (benign.analysis.convergence.step_convergence;
    ``convergence``: {"setting": the check's runs, "factor": the step's divisor}, or None)."""
    criteria = Criteria(**regime)
    atlas, labels = atlas_labels(runs, curves, settings, horizons, criteria)
    checked = pd.DataFrame()
    if convergence:
        longest, factor = max(horizons), convergence["factor"]
        found, found_labels = atlas_labels(runs, curves, [convergence["setting"]], [longest * factor], criteria)
        checked = step_convergence(atlas, labels, found, found_labels, longest, factor)
    curves = curves[curves["run_id"].isin(atlas["run_id"])]
    return AtlasView(runs=atlas, labels=labels, criteria=criteria, curves=curves, convergence=checked)


def sweeps_view(runs: pd.DataFrame, curves: pd.DataFrame, settings) -> SweepsView:
    """The runs of some sweeps, each once, and their curves (benign.artifacts)."""
    runs = runs[in_sweeps(runs, settings)].drop_duplicates("run_id")
    return SweepsView(runs=runs, curves=curves[curves["run_id"].isin(runs["run_id"])])


def regime_fractions(labels: pd.DataFrame, runs: pd.DataFrame, keys) -> pd.DataFrame:
    """The fraction of seeds in each regime per (horizon, *keys) cell: ``labels`` from
    :func:`regimes_at`, ``keys`` columns of ``runs``. Runs without a label count in
    ``seeds`` but in no regime."""
    cells = labels.merge(runs[["run_id", *keys]], on="run_id")
    group = cells.groupby(["horizon", *keys])
    out = group.size().rename("seeds").to_frame()
    for regime in REGIMES:
        out[regime] = group["regime"].apply(lambda r, regime=regime: float((r == regime).mean()))
    return out.reset_index()
