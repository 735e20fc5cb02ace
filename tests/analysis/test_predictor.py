"""The regime predictor (benign/analysis/predictor.py, `python -m benign regime`) on a hand-made model."""

import math

import pandas as pd
import pytest

from benign.analysis.predictor import OutsideModel, predict
from benign.cli import main


def model_table(sigma: float = 0.2, var_c: float = 0.01) -> pd.DataFrame:
    """Not overfitting above 2 sqrt(d / n), selection above d^(1/4), at 1000 and 10000 steps,
    fitted on d 100 to 1600 and n 10 to 40: crossings scatter by ``sigma`` in log ||mu||, and the
    law's constant is known to a variance ``var_c`` (its other terms exactly)."""
    rows = []
    for horizon in (1000, 10000):
        for name, c, a, b in (("not overfitting", 2.0, 0.5, -0.5), ("selection (harmful below)", 1.0, 0.25, 0.0)):
            row = {"boundary": name, "horizon": horizon, "d_min": 100, "d_max": 1600, "n_min": 10, "n_max": 40,
                   "sigma": sigma, "crossings": 64, "lines": 16, "log_c": math.log(c), "a": a, "b": b,
                   "step_size": 5.0, "sigma_noise": 1.0}  # fmt: skip
            row.update({f"cov_{t}_{u}": 0.0 for t in ("log_c", "a", "b") for u in ("log_c", "a", "b")})
            row["cov_log_c_log_c"] = var_c
            rows.append(row)
    return pd.DataFrame(rows)


def Phi(z):
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def test_probabilities_hand_worked():
    out = predict(model_table(), d=400, n=10, signal_norm=8.0)
    p_no = Phi((math.log(8.0) - math.log(2 * math.sqrt(40))) / 0.2)
    p_sel = Phi((math.log(8.0) - math.log(400**0.25)) / 0.2)
    got = out["regimes"]
    assert out["horizon"] == 10000
    assert got["not_overfitting"][0] == pytest.approx(p_no)
    assert got["benign"][0] == pytest.approx((1 - p_no) * p_sel)
    assert got["harmful"][0] == pytest.approx((1 - p_no) * (1 - p_sel))
    assert sum(p for p, _, _ in got.values()) == pytest.approx(1.0)
    for p, low, high in got.values():
        assert low <= p <= high and high - low > 0
    half = 2.160369 * math.sqrt(0.01)  # the boundary's own 95% half-width in log ||mu||: t on 16 lines - 3 terms
    low_no = Phi((math.log(8.0) - math.log(2 * math.sqrt(40)) - half) / 0.2)
    assert got["not_overfitting"][1] == pytest.approx(low_no, rel=1e-5)
    star, low, high = out["boundaries"]["not overfitting"]
    new = 2.160369 * math.sqrt(0.01 + 0.2**2)  # a new crossing: the law's variance and the scatter, t on 16 - 3
    assert out["lr"] == pytest.approx(5.0 / 400) and out["steps"] == 10000 and out["time"] == 50000
    assert (star, low, high) == pytest.approx(
        (2 * math.sqrt(40), star * math.exp(-new), star * math.exp(new)), rel=1e-5
    )


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
    assert "after 1000 steps at lr 0.0125 (step size 5, time 5000)" in out and "benign" in out
    assert "not overfitting boundary" in out


def test_the_cli_says_where_the_model_is_missing(tmp_path, capsys):
    assert (
        main(["regime", "--d", "400", "--n", "10", "--signal-norm", "8", "--model-table", str(tmp_path / "no.csv")])
        == 2
    )
    assert "no fitted regime model" in capsys.readouterr().err


def test_outside_model_is_a_value_error():
    with pytest.raises(OutsideModel):
        predict(model_table(), d=1e5, n=10, signal_norm=1.0)


def test_the_answer_warns_below_the_design_region_and_names_the_integrator(tmp_path, capsys):
    """The hand-made model's lines all have d >= 1 n^2 (100 at n 10 to 1600 at n 40): (400, 40) is
    inside both ranges but below d = n^2, and the answer says so, in the JSON and on stderr;
    (1600, 10) is inside. A model fitted on flow runs names the flow and its tolerance."""
    table = model_table().assign(d_min_per_n2=1.0, integrator="flow", flow_tol=0.05)
    below, inside = predict(table, d=400, n=40, signal_norm=8.0), predict(table, d=1600, n=10, signal_norm=8.0)
    assert not below["design"]["inside"] and "400 < 1 n^2 = 1600" in below["design"]["warning"]
    assert inside["design"] == {"inside": True, "d_over_n2_min": 1.0, "warning": ""}
    assert inside["integrator"] == "flow" and inside["flow_tol"] == 0.05
    path = tmp_path / "model.csv"
    table.to_csv(path, index=False)
    assert main(["regime", "--d", "400", "--n", "40", "--signal-norm", "8", "--model-table", str(path)]) == 0
    out = capsys.readouterr()
    assert "warning: d 400 < 1 n^2" in out.err and "the flow at tolerance 0.05" in out.out
