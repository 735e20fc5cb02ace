"""The censored regressions of benign/analysis/survival.py: on simulated times seen only at logged
steps, censored at the horizon and shared by the runs of a line, they recover a known slope, their
intervals cover it, and the delays keep their sign."""

import numpy as np
import pandas as pd
import pytest

from benign.analysis import survival
from benign.synthetic.trainer import log_steps


def simulated(slope: float, horizon: int = 10_000, lines: int = 40, per_line: int = 10, seed: int = 0,
              power: bool = False, shared: float = 0.3) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """Runs whose generalization time follows log T = 2 + slope * SNR + u + 0.4 z (with ``power``,
    log T = 9 + slope * log SNR + u + 0.4 z: T ~ SNR^slope), u a normal of std ``shared`` per line
    (its runs share the line's draw), z one per run; logged at 41 log-spaced steps up to
    ``horizon`` (a time is known only between two logged steps, and censored past the horizon),
    as a runs table with milestones and its curves' steps."""
    rng = np.random.default_rng(seed)
    runs = lines * per_line
    snr = rng.uniform(0.5, 4.5, runs)
    line = np.repeat(np.arange(lines), per_line)
    centre = (9 + slope * np.log(snr) if power else 2 + slope * snr) + shared * rng.standard_normal(lines)[line]
    times = np.exp(centre + 0.4 * rng.standard_normal(runs))
    steps = np.array(log_steps(horizon, points=41))
    seen = np.array([steps[np.searchsorted(steps, t)] if t <= horizon else horizon for t in times], dtype=float)
    ids = [f"r{i}" for i in range(runs)]
    table = pd.DataFrame({"run_id": ids, "status": "ok", "snr": snr, "n": 20, "d": 2000, "seed": line,
                          "signal_norm": snr, "generalized_step": seen, "generalized_censored": times > horizon,
                          "fit_noisy_step": seen, "fit_noisy_censored": times > horizon})  # fmt: skip
    curves = pd.DataFrame({"run_id": np.repeat(ids, len(steps)), "step": np.tile(steps, runs)})
    return table, curves


def _coefficient(rows: list[dict], form: str) -> pd.Series:
    table = pd.DataFrame(rows)
    return table[(table["form"] == form) & (table["covariate"] == "x")].iloc[0]


def test_the_regression_recovers_a_known_slope_with_censored_and_interval_times():
    runs, curves = simulated(slope=2.0)
    times = survival.intervals(runs, curves, "generalized")
    assert times["censored"].mean() > 0.2  # the horizon censors a good share: the test has teeth
    x = _coefficient(survival.regression_rows(times, "generalized", "all"), "snr")
    assert x["coef_low"] <= 2.0 <= x["coef_high"] and x["coef_high"] - x["coef_low"] < 0.6
    assert bool(x["better_form"]) and x["units"] == 40 and x["unit"] == "lines"  # one cell: the lines are the units


def test_the_power_law_form_recovers_a_known_exponent_and_wins():
    """T ~ SNR^-2.5 seen at logged steps and censored at the horizon: the log-SNR form's
    interval holds -2.5, and it has the lowest AIC of the three forms."""
    runs, curves = simulated(slope=-2.5, power=True, seed=4)
    times = survival.intervals(runs, curves, "generalized")
    assert times["censored"].mean() > 0.05
    x = _coefficient(survival.regression_rows(times, "generalized", "all"), "log_snr")
    assert x["coef_low"] <= -2.5 <= x["coef_high"] and x["coef_high"] - x["coef_low"] < 0.8
    assert bool(x["better_form"])


def test_the_intervals_cover_the_slope_when_lines_share_their_draws(capsys):
    """Ten runs a line share the line's draw: the intervals, clustered by line, hold the true
    slope in 90% to 98% of 120 simulated atlases of times."""
    hits, draws = 0, 120
    for seed in range(draws):
        runs, curves = simulated(slope=2.0, seed=100 + seed)
        fit = survival.regression(survival.intervals(runs, curves, "generalized"), "snr")
        _, low, high = fit["coef"]["x"]
        hits += low <= 2.0 <= high
    with capsys.disabled():
        print(f"\n[survival] coverage of 95% intervals clustered by line, {draws} draws: {hits / draws:.1%}")
    assert 0.90 * draws <= hits <= 0.98 * draws, hits


def test_each_runs_delay_is_the_ratio_of_its_two_intervals_and_keeps_its_sign():
    """A run fitted in (10, 20] and generalized in (50, 80] has its delay ratio in (2.5, 8]; one
    that selects (in (10, 20]) before it fits (in (50, 80]) keeps a ratio under 1 and a negative
    delay; one not generalized by the horizon is right-censored; one that never fits has none."""
    runs = pd.DataFrame({"run_id": ["a", "b", "c", "e"], "status": "ok", "snr": 1.0, "n": 20, "d": 2000, "seed": 1,
                         "signal_norm": 1.0, "fit_noisy_step": [20.0, 20.0, 100.0, 80.0],
                         "fit_noisy_censored": [False, False, True, False],
                         "generalized_step": [80.0, 100.0, 100.0, 20.0],
                         "generalized_censored": [False, True, True, False]})  # fmt: skip
    steps = [0, 10, 20, 50, 80, 100]
    curves = pd.DataFrame({"run_id": np.repeat(runs["run_id"], len(steps)), "step": steps * 4})
    delay = survival.delays(runs, curves).set_index("run_id")
    assert list(delay.index) == ["a", "b", "e"]
    assert (delay.loc["a", "lower"], delay.loc["a", "upper"], delay.loc["a", "first"]) == (2.5, 8.0, 60.0)
    assert delay.loc["b", "censored"] and np.isinf(delay.loc["b", "upper"]) and delay.loc["b", "lower"] == 5.0
    assert delay.loc["e", "upper"] == pytest.approx(0.4) and delay.loc["e", "first"] == -60.0


def test_intervals_hold_the_time_between_two_logged_steps():
    runs, curves = simulated(slope=1.0, lines=5, seed=2)
    times = survival.intervals(runs, curves, "generalized").set_index("run_id")
    steps = np.array(log_steps(10_000, points=41))
    for run in runs.itertuples():
        row = times.loc[run.run_id]
        if run.generalized_censored:
            assert row["lower"] == 10_000 and np.isinf(row["upper"])
        else:
            assert row["upper"] == max(run.generalized_step, survival.FIRST_LOW)
            k = np.searchsorted(steps, run.generalized_step)
            assert row["lower"] == (steps[k - 1] if k > 0 and steps[k - 1] > 0 else 0.0)  # left-censored at the start


def test_band_medians_report_censoring_and_the_signed_delay():
    runs, curves = simulated(slope=2.0, lines=20, seed=3)
    runs["generalized_step"] = np.minimum(runs["generalized_step"] * 2, 10_000)  # selection after the fit
    table = survival.band_medians(runs, curves, bands=2)
    assert len(table) == 2 and table["generalized_runs"].sum() == 200
    assert (table["delay"].dropna() >= 0).all() and (table["selection_first"] == 0).all()
    assert table["snr_low"].is_monotonic_increasing


@pytest.mark.parametrize("form", list(survival.FORMS))
def test_covariates_leave_out_an_axis_that_does_not_vary(form):
    runs, curves = simulated(slope=1.0, lines=3, seed=4)
    cols = survival.covariates(survival.intervals(runs, curves, "generalized"), form)
    assert list(cols.columns) == ["lower", "upper", "x"]


def test_a_group_whose_times_are_all_censored_is_reported_not_fitted():
    runs, curves = simulated(slope=2.0, lines=10, seed=5)
    runs = runs.assign(generalized_censored=True, generalized_step=10_000.0)
    rows = pd.DataFrame(survival.regression_rows(survival.intervals(runs, curves, "generalized"), "generalized", "g"))
    assert len(rows) == 1 and rows["form"].iloc[0] == "" and np.isnan(rows["aic"].iloc[0])
    assert rows["runs"].iloc[0] == 100 and rows["censored"].iloc[0] == 100


def test_runs_are_grouped_by_where_their_hard_max_readout_heads():
    runs = pd.DataFrame({"test_err_hardmax": [0.0, 0.25, 0.3, np.nan]})
    assert list(survival.long_time_groups(runs, 0.25)) == ["selects", "selects", "does not select", "does not select"]


CELLS = [(d, n) for d in (1e3, 1e4, 1e5, 1e6, 1e7) for n in (10, 20, 40) if d >= 5 * n * n]  # the atlas's 13


def cell_atlas(seed: int, miss: float = 0.3, per_line: int = 5, seeds: int = 4) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Times on the atlas's 13 (d, n) cells: log T = 2 + 1.5 SNR + 0.3 log d - 0.2 log n + a miss
    of std ``miss`` shared by each cell's seeds (what the model misses at a (d, n)) + a line
    effect (0.1) + 0.3 z per run, logged at 41 log-spaced steps to 10^4 and censored there."""
    rng = np.random.default_rng(seed)
    steps = np.array(log_steps(10_000, points=41))
    rows, k = [], 0
    for d, n in CELLS:
        cell = miss * rng.standard_normal()
        for s in range(seeds):
            line = 0.1 * rng.standard_normal()
            snr = rng.uniform(0.5, 2.0, per_line)
            t = np.exp(
                2 + 1.5 * snr + 0.3 * np.log(d) - 0.2 * np.log(n) + cell + line + 0.3 * rng.standard_normal(per_line)
            )
            for x, ti in zip(snr, t):
                seen = steps[np.searchsorted(steps, ti)] if ti <= 10_000 else 10_000
                rows.append({"run_id": f"r{k}", "status": "ok", "snr": x, "n": n, "d": d, "seed": s, "signal_norm": x,
                             "generalized_step": float(seen), "generalized_censored": bool(ti > 10_000)})  # fmt: skip
                k += 1
    runs = pd.DataFrame(rows)
    curves = pd.DataFrame({"run_id": np.repeat(runs["run_id"], len(steps)), "step": np.tile(steps, len(runs))})
    return runs, curves


@pytest.mark.slow
def test_the_intervals_cover_across_the_atlas_cells(capsys):
    """A miss shared by each (d, n) cell's seeds: the intervals over cells (the delete-one-cell
    jackknife, Student's t on 12) hold the true coefficients of SNR and of log d in at least 90%
    of 100 simulated atlases; clustered by line, as before, the log d interval covers far less
    (the check that the test can fail)."""
    draws, hits, by_line = 100, {"x": 0, "log_d": 0}, 0
    for seed in range(draws):
        runs, curves = cell_atlas(seed)
        times = survival.intervals(runs, curves, "generalized")
        fit = survival.regression(times, "snr")
        assert fit["unit"] == "cells" and fit["units"] == 13
        for name, truth in (("x", 1.5), ("log_d", 0.3)):
            _, low, high = fit["coef"][name]
            hits[name] += low <= truth <= high
        columns = survival.covariates(times, "snr")
        X = np.column_stack([np.ones(len(times)), columns.drop(columns=["lower", "upper"]).to_numpy(float)])
        lower, upper = columns["lower"].to_numpy(float), columns["upper"].to_numpy(float)
        params = survival.ic.maximise(X, np.zeros(len(X)), lower, upper, survival.FLOOR)
        groups = times.groupby(["d", "n", "seed"]).ngroup().to_numpy()  # the former units: lines
        cov = survival.ic.clustered_covariance(params, X, np.zeros(len(X)), lower, upper, groups, held=False)
        half = 1.99 * np.sqrt(cov[3, 3])  # log_d, Student's t on the 51 lines
        by_line += abs(params[3] - 0.3) <= half
    with capsys.disabled():
        print(
            f"\n[survival] coverage over cells, {draws} atlases: x {hits['x'] / draws:.0%}, log d "
            f"{hits['log_d'] / draws:.0%}; log d clustered by line: {by_line / draws:.0%}"
        )
    assert all(h >= 0.90 * draws for h in hits.values()), hits
    assert by_line < 0.85 * draws, by_line


def test_the_times_read_only_the_runs_trained_to_their_lines_full_length():
    """A refinement norm only an early window needs is trained to that window's horizon: its
    censoring is tied to its event time, so the survival tables leave it out (per (d, n) line)."""
    from benign.analysis.survival import full_length

    runs = pd.DataFrame({"d": [100, 100, 100, 200, 200], "n": [10, 10, 10, 10, 10],
                         "steps": [1000, 10, 1000, 316, 316], "run_id": list("abcde")})  # fmt: skip
    assert list(full_length(runs)["run_id"]) == ["a", "c", "d", "e"]
