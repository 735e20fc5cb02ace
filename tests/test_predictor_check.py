"""The regime predictor's check off the grid (benign/analysis/predictor_check.py): where a bracket
lies against an interval, the cells' coverage and its interval, and, on simulated checks, that
a right model reads "consistent with 95%" and a wrong one "below 95%"."""

import math

import numpy as np
import pandas as pd
import pytest

from benign.analysis import predictor_check as check
from tests.test_predictor import model_table

NAME = "not overfitting"


def test_a_bracket_lies_inside_outside_or_across_an_interval():
    assert check.place(2.0, 3.0, 1.0, 4.0) == "inside"
    assert check.place(5.0, 6.0, 1.0, 4.0) == "outside" and check.place(0.2, 0.5, 1.0, 4.0) == "outside"
    assert check.place(3.0, 5.0, 1.0, 4.0) == "straddles"
    assert check.place(0.0, 2.0, 1.0, 4.0) == "straddles"  # censored below: open on that side
    assert check.place(5.0, math.inf, 1.0, 4.0) == "outside"


def test_the_cells_interval_is_students_t_or_clopper_pearson_where_the_cells_agree():
    values = np.array([1.0, 0.75, 1.0, 0.5, 1.0])
    mean, low, high = check.mean_interval(values)
    half = 2.776445 * values.std(ddof=1) / math.sqrt(5)  # t(0.975, 4)
    assert mean == pytest.approx(0.85) and low == pytest.approx(0.85 - half, abs=1e-5) and high == 1.0
    mean, low, high = check.mean_interval(np.ones(7))  # no spread: 7 of 7 cells, exact binomial
    assert mean == 1.0 and low == pytest.approx(0.025 ** (1 / 7), abs=1e-6) and high == 1.0
    assert np.isnan(check.mean_interval(np.ones(1))[1])


CELLS = [(200, 10), (300, 14), (500, 20), (700, 12), (900, 16), (1200, 24), (1500, 30), (1600, 40)]


def _simulated(rng, model: pd.DataFrame, shift: float, seeds: int = 4):
    """A check of ``model`` at CELLS, seeds each, at its longest horizon: each cell's law missed
    by N(0, var_c) (the model's own uncertainty of its constant), each seed's crossing off that by
    N(0, sigma^2), then moved by ``shift`` in ln ||mu||; labels on a factor 2^(1/8) grid."""
    row = model[(model["boundary"] == NAME) & (model["horizon"] == 10000)].iloc[0]
    runs, labels = [], []
    for d, n in CELLS:
        law = row["log_c"] + row["a"] * math.log(d) + row["b"] * math.log(n)
        miss = rng.normal(0, math.sqrt(row["cov_log_c_log_c"]))
        for seed in range(seeds):
            star = law + miss + rng.normal(0, row["sigma"]) + shift
            for k in range(-40, 41):
                norm = math.exp(law + k * math.log(2) / 8)
                rid = f"{d}-{n}-{seed}-{k}"
                runs.append({"run_id": rid, "d": d, "n": n, "seed": seed, "signal_norm": norm})
                labels.append({"run_id": rid, "horizon": 10000, "overfits": math.log(norm) < star})
    return pd.DataFrame(runs), pd.DataFrame(labels)


def _verdict(model, runs, labels) -> str:
    table = check.coverage(check.cell_coverage(check.seed_brackets(runs, labels, model)))
    (row,) = table[table["horizon"] == 10000].itertuples()
    assert row.cells == len(CELLS) and row.region == "design"
    return row.verdict


@pytest.mark.parametrize("shift, wanted, rate", [(0.0, "consistent with 95%", 0.9), (0.6, "below 95%", 0.9)])
def test_simulated_checks_read_a_right_model_as_consistent_and_a_wrong_one_as_below(shift, wanted, rate):
    """50 checks of 8 cells x 4 seeds: the model the crossings were drawn from (its interval of
    a new crossing covers about 97%: Student's t on 16 lines) reads 'consistent with 95%' in at
    least 90% of them; crossings moved by 0.6 in ln ||mu|| (2.7 times the spread of a new crossing) read
    'below 95%' in at least 90%. Without the Clopper-Pearson fallback, a check whose every cell
    covers would read 'above 95%' on a zero-width interval (the first case then fails)."""
    rng = np.random.default_rng(7)
    model = model_table(sigma=0.2, var_c=0.01)
    verdicts = [_verdict(model, *_simulated(rng, model, shift)) for _ in range(50)]
    assert np.mean([v == wanted for v in verdicts]) >= rate, pd.Series(verdicts).value_counts()


def test_a_check_trained_off_the_predictors_schedule_is_refused():
    model = model_table()
    runs = pd.DataFrame({"step_size": [5.0, 2.5]})
    assert "step_size" in check.schedule_problem(runs, model)
    assert check.schedule_problem(pd.DataFrame({"step_size": [5.0]}), model) == ""
