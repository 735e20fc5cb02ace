"""The regime predictor (benign/analysis/predictor.py, `python -m benign regime`) on a hand-made model."""

import math

import pandas as pd
import pytest

from benign.analysis.predictor import OutsideModel, predict
from benign.cli import main


def model_table() -> pd.DataFrame:
    """Not overfitting above 2 sqrt(d / n), selection above d^(1/4), at 1000 and 10000 steps, on
    lines d in {100, 1600} x n in {10, 40}, each boundary known to a factor 1.1 either way."""
    rows = []
    for horizon in (1000, 10000):
        for name, c, a, b, k in (
            ("not overfitting", 2.0, 0.5, -0.5, 4.0),
            ("selection (harmful below)", 1.0, 0.25, 0.0, 6.0),
        ):
            for d in (100, 1600):
                for n in (10, 40):
                    star = c * d**a * n**b
                    rows.append({"boundary": name, "horizon": horizon, "d": d, "n": n, "mu_star": star,
                                 "mu_star_low": star / 1.1, "mu_star_high": star * 1.1, "k": k, "c": c, "a": a, "b": b})  # fmt: skip
    return pd.DataFrame(rows)


def sigmoid(z):
    return 1 / (1 + math.exp(-z))


def test_probabilities_hand_worked():
    out = predict(model_table(), d=400, n=10, signal_norm=8.0)
    p_no = sigmoid(4.0 * (math.log(8.0) - math.log(2 * math.sqrt(40))))
    p_sel = sigmoid(6.0 * (math.log(8.0) - math.log(400**0.25)))
    got = out["regimes"]
    assert out["horizon"] == 10000
    assert got["not_overfitting"][0] == pytest.approx(p_no)
    assert got["benign"][0] == pytest.approx((1 - p_no) * p_sel)
    assert got["harmful"][0] == pytest.approx((1 - p_no) * (1 - p_sel))
    assert sum(p for p, _, _ in got.values()) == pytest.approx(1.0)
    for p, low, high in got.values():
        assert low <= p <= high and high - low > 0
    low_no = sigmoid(4.0 * (math.log(8.0) - math.log(2 * math.sqrt(40) * 1.1)))
    assert got["not_overfitting"][1] == pytest.approx(low_no)


@pytest.mark.parametrize(
    "args, words",
    [
        (["--d", "50", "--n", "10", "--signal-norm", "8"], "--d 50: outside the fitted range 100 to 1600"),
        (["--d", "400", "--n", "80", "--signal-norm", "8"], "--n 80: outside the fitted range 10 to 40"),
        (["--d", "400", "--n", "10", "--signal-norm", "8", "--steps", "5000"], "--steps 5000: the model was fitted at"),
        (["--d", "400", "--n", "10", "--signal-norm", "-1"], "--signal-norm -1: must be > 0"),
    ],
)
def test_the_cli_refuses_what_the_model_was_not_fitted_on(tmp_path, capsys, args, words):
    path = tmp_path / "model.csv"
    model_table().to_csv(path, index=False)
    assert main(["regime", *args, "--model-table", str(path)]) == 2
    assert words in capsys.readouterr().err


def test_the_cli_answers_inside_the_range(tmp_path, capsys):
    path = tmp_path / "model.csv"
    model_table().to_csv(path, index=False)
    assert (
        main(["regime", "--d", "400", "--n", "10", "--signal-norm", "8", "--steps", "1000", "--model-table", str(path)])
        == 0
    )
    out = capsys.readouterr().out
    assert "after 1000 steps" in out and "benign" in out and "not overfitting boundary" in out


def test_the_cli_says_where_the_model_is_missing(tmp_path, capsys):
    assert (
        main(["regime", "--d", "400", "--n", "10", "--signal-norm", "8", "--model-table", str(tmp_path / "no.csv")])
        == 2
    )
    assert "no fitted regime model" in capsys.readouterr().err


def test_outside_model_is_a_value_error():
    with pytest.raises(OutsideModel):
        predict(model_table(), d=1e5, n=10, signal_norm=1.0)
