"""The censored regression of benign/analysis/survival.py recovers a known slope from simulated times
that are seen only at logged steps and censored at the horizon."""

import numpy as np
import pandas as pd
import pytest

from benign.analysis import survival
from benign.synthetic.trainer import log_steps


def simulated(slope: float, horizon: int = 10_000, runs: int = 400, seed: int = 0,
              power: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """Runs whose generalization time follows log T = 2 + slope * SNR + 0.4 Gumbel (with
    ``power``, log T = 9 + slope * log SNR + 0.4 Gumbel: T ~ SNR^slope), logged at 41
    log-spaced steps up to ``horizon`` (so a time is known only between two logged steps, and
    censored past the horizon), as a runs table with milestones and its curves' steps."""
    rng = np.random.default_rng(seed)
    snr = rng.uniform(0.5, 4.5, runs)
    centre = 9 + slope * np.log(snr) if power else 2 + slope * snr
    times = np.exp(centre + 0.4 * rng.gumbel(size=runs))
    steps = np.array(log_steps(horizon, points=41))
    seen = np.array([steps[np.searchsorted(steps, t)] if t <= horizon else horizon for t in times], dtype=float)
    ids = [f"r{i}" for i in range(runs)]
    table = pd.DataFrame({"run_id": ids, "status": "ok", "snr": snr, "n": 20, "d": 2000, "signal_norm": snr,
                          "generalized_step": seen, "generalized_censored": times > horizon,
                          "fit_noisy_step": seen, "fit_noisy_censored": times > horizon})  # fmt: skip
    curves = pd.DataFrame({"run_id": np.repeat(ids, len(steps)), "step": np.tile(steps, runs)})
    return table, curves


def test_the_weibull_aft_recovers_a_known_slope_with_censored_and_interval_times():
    runs, curves = simulated(slope=2.0)
    times = survival.intervals(runs, curves, "generalized")
    assert times["censored"].mean() > 0.2  # the horizon censors a good share: the test has teeth
    rows = pd.DataFrame(survival.aft_rows(times, "generalized"))
    x = rows[(rows["form"] == "snr") & (rows["covariate"] == "x")].iloc[0]
    assert x["coef_low"] <= 2.0 <= x["coef_high"] and x["coef_high"] - x["coef_low"] < 0.5
    assert bool(x["better_form"])  # the true form (linear in SNR) has the lower AIC


def test_the_power_law_form_recovers_a_known_exponent_and_wins():
    """T ~ SNR^-2.5 seen at logged steps and censored at the horizon: the log-SNR form's
    interval holds -2.5, and it has the lowest AIC of the three forms."""
    runs, curves = simulated(slope=-2.5, power=True, seed=4)
    times = survival.intervals(runs, curves, "generalized")
    assert times["censored"].mean() > 0.1
    rows = pd.DataFrame(survival.aft_rows(times, "generalized"))
    x = rows[(rows["form"] == "log_snr") & (rows["covariate"] == "x")].iloc[0]
    assert x["coef_low"] <= -2.5 <= x["coef_high"] and x["coef_high"] - x["coef_low"] < 0.6
    assert bool(x["better_form"])


def test_each_runs_delay_is_the_difference_of_its_two_intervals():
    """A run fitted in (10, 20] and generalized in (50, 80] has its delay in (30, 70]; one not
    generalized by the horizon is right-censored; one that never fits has no delay."""
    runs = pd.DataFrame({"run_id": ["a", "b", "c"], "status": "ok", "snr": 1.0, "n": 20, "d": 2000, "signal_norm": 1.0,
                         "fit_noisy_step": [20.0, 20.0, 100.0], "fit_noisy_censored": [False, False, True],
                         "generalized_step": [80.0, 100.0, 100.0], "generalized_censored": [False, True, True]})  # fmt: skip
    steps = [0, 10, 20, 50, 80, 100]
    curves = pd.DataFrame({"run_id": np.repeat(["a", "b", "c"], len(steps)), "step": steps * 3})
    delay = survival.delays(runs, curves).set_index("run_id")
    assert list(delay.index) == ["a", "b"]
    assert (delay.loc["a", "lower"], delay.loc["a", "upper"], delay.loc["a", "first"]) == (30.0, 70.0, 60.0)
    assert delay.loc["b", "censored"] and np.isinf(delay.loc["b", "upper"]) and delay.loc["b", "lower"] == 80.0


def test_intervals_hold_the_time_between_two_logged_steps():
    runs, curves = simulated(slope=1.0, runs=50, seed=2)
    times = survival.intervals(runs, curves, "generalized").set_index("run_id")
    steps = np.array(log_steps(10_000, points=41))
    for run in runs.itertuples():
        row = times.loc[run.run_id]
        if run.generalized_censored:
            assert row["lower"] == 10_000 and np.isinf(row["upper"])
        else:
            assert row["upper"] == run.generalized_step
            k = np.searchsorted(steps, row["upper"])
            assert row["lower"] == (steps[k - 1] if k > 0 and steps[k - 1] > 0 else survival.FIRST_LOW)


def test_band_medians_report_censoring_and_the_delay():
    runs, curves = simulated(slope=2.0, runs=200, seed=3)
    runs["generalized_step"] = np.minimum(runs["generalized_step"] * 2, 10_000)  # selection after the fit
    table = survival.band_medians(runs, curves, bands=2)
    assert len(table) == 2 and table["generalized_runs"].sum() == 200
    assert (table["delay"].dropna() >= 0).all()
    assert table["snr_low"].is_monotonic_increasing


@pytest.mark.parametrize("form", list(survival.FORMS))
def test_covariates_leave_out_an_axis_that_does_not_vary(form):
    runs, curves = simulated(slope=1.0, runs=30, seed=4)
    cols = survival.covariates(survival.intervals(runs, curves, "generalized"), form)
    assert list(cols.columns) == ["lower", "upper", "x"]


def test_a_form_that_does_not_converge_is_reported_not_dropped(monkeypatch):
    from lifelines.exceptions import ConvergenceError

    runs, curves = simulated(slope=2.0, runs=120, seed=5)
    times = survival.intervals(runs, curves, "generalized")
    real_aft = survival.aft

    def failing(times, form):
        if form == "log_snr":
            raise ConvergenceError("did not converge")
        return real_aft(times, form)

    monkeypatch.setattr(survival, "aft", failing)
    rows = pd.DataFrame(survival.aft_rows(times, "generalized"))
    failed = rows[rows["form"] == "log_snr"]
    assert len(failed) == 1 and not failed["converged"].iloc[0] and np.isnan(failed["aic"].iloc[0])
    assert rows[rows["form"] != "log_snr"]["converged"].all() and rows["better_form"].sum() > 0
