"""The atlas's computed limit (benign/synthetic/svm_limit.py): its labels against a dense
d-dimensional recomputation, the limit as where the gradient flow goes, and the refinement of its
crossings."""

import math

import numpy as np
import pandas as pd
import pytest

from benign.synthetic import flow, limit_schema, models, svm_limit
from benign.synthetic.max_margin import svm_direction_from_gram
from benign.synthetic.selection import hardmax_error
from tests.helpers.svm import svm_direction

LINE = dict(d=400, n=6, T=4, rho=0.1, eta=0.34, sigma=1.0, n_test=300, seed=5, engine="explicit", lr=5 / 400,
            flow_tol=0.05)  # fmt: skip
NORMS = [2.0, 4.0, 8.0, 16.0]


def sides(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"argmax": frame["test_sel_relevant"].to_numpy() >= 0.5 - 1e-9,
                         "hardmax": frame["test_err_hardmax"].to_numpy() <= 0.25 + 1e-9})  # fmt: skip


def test_the_global_selection_picks_each_samples_token_of_highest_score():
    y = np.array([1.0, -1.0])
    values = np.array([[0.5, 0.1, -0.2], [0.5, 0.1, -0.2]])
    assert svm_limit.global_selection(y, values).tolist() == [0, 2]


@pytest.fixture(scope="module")
def frame():
    return svm_limit.limit_runs(LINE, NORMS, horizon=10**4)


def test_the_frame_has_the_limits_columns_two_rows_a_norm(frame):
    assert frame.columns.tolist() == limit_schema.LIMIT.names
    assert sorted(frame["selection"].unique()) == sorted(svm_limit.SELECTIONS)
    assert len(frame) == 2 * len(NORMS) and frame["feasible"].all()  # d > n T: every selection separable


@pytest.mark.parametrize("selection", ["global", "run"])
def test_the_limit_matches_a_dense_recomputation_in_d_dimensions(frame, selection):
    """p^mm from the explicit keys W0^T x (d = 400) of the selection (the global one by hand; the
    twin's from its own flow to the horizon), the test tokens' logits <W0^T x, p^mm>, each test
    sample's hard-max readout and argmax by hand: the Gram route's numbers exactly."""
    B = len(NORMS)
    batch = models.build("token_p_w0", n=6, T=4, d=400, sigma=1.0, n_test=300, seed=5, signal_norms=NORMS,
                         rhos=[0.1] * B, etas=[0.34] * B, lrs=[LINE["lr"]] * B, engine="explicit")  # fmt: skip
    W0 = batch.W0.numpy()
    twin = batch.scores().numpy()
    if selection == "run":
        svm_limit.train_twin(batch, 10**4, LINE["flow_tol"])
        twin = batch.scores().numpy()
    glob = frame[frame["selection"] == selection].sort_values("signal_norm")
    for b in range(B):
        X = batch.E.numpy().reshape(6, 4, 400).copy()
        X[..., :2] += batch.Mc[b].numpy().reshape(6, 4, 2)
        Xt = batch.Et.numpy().reshape(300, 4, 400).copy()
        Xt[..., :2] += batch.Mt[b].numpy().reshape(300, 4, 2)
        nu = np.zeros(400)
        nu[0], nu[1] = 1 / math.sqrt(2) / NORMS[b], -1 / math.sqrt(2) / NORMS[b]
        y = batch.y[b].numpy()
        a = np.argmax(y[:, None] * (X @ nu), axis=1) if selection == "global" else twin[b].argmax(-1)
        p = svm_direction(X @ W0, a)  # keys W0^T x, as rows of X W0
        top = np.argmax((Xt @ W0) @ p, axis=1)
        values = (Xt @ nu)[np.arange(300), top]
        row = glob.iloc[b]
        assert row["test_err_hardmax"] == pytest.approx(np.mean(batch.y_test.numpy() * values <= 0), abs=1e-12)
        assert row["test_sel_relevant"] == pytest.approx(np.mean(top == 0), abs=1e-12)


def test_the_limit_is_where_the_gradient_flow_goes():
    """The W-frozen twin trained far past the horizon keeps the selection it held, its direction
    turns towards that selection's p^mm (cosine rising towards 1, about 1 / log t), and its own
    hard-max readout's test error heads for the limit's."""
    frame = svm_limit.limit_runs(LINE, [8.0], horizon=10**4)
    run = frame[frame["selection"] == "run"].iloc[0]
    batch = models.build("token_p_w0", n=6, T=4, d=400, sigma=1.0, n_test=300, seed=5, signal_norms=[8.0],
                         rhos=[0.1], etas=[0.34], lrs=[5 / 400], engine="explicit")  # fmt: skip
    gram = batch.key_gram("init").numpy()[0]
    clock, scores = flow.Clock(), batch.scores()
    cosines, held = [], None
    for horizon in (10**4, 10**8, 10**12):
        while clock.time < horizon:
            scores = flow.advance(batch, clock, 0.05, scores)
        a = batch.scores().numpy()[0].argmax(-1)
        held = a if held is None else held
        assert (a == held).all()  # the selection held at 10^4 steps is kept
        c = batch.c.numpy()[0]
        c_mm, alpha = svm_direction_from_gram(gram, 4, a)
        cosines.append(float(c @ gram @ c_mm / math.sqrt(c @ gram @ c) / math.sqrt(alpha.sum())))
    assert cosines[0] == pytest.approx(run["cosine"], abs=1e-9)
    assert cosines[0] < cosines[1] < cosines[2] and cosines[2] > 0.99
    _, att = batch.outputs_test(attention=True)
    late = hardmax_error(att, batch.head_values("test"), batch.y_test)[0]
    assert abs(late - run["test_err_hardmax"]) <= 2 / 300  # the limit's test error, to two of the 300 test samples


def test_selection_kinds_are_the_limits_kinds_of_the_global_selection(frame):
    runs = pd.DataFrame([dict(LINE, signal_norm=m, run_id=f"r{i}") for i, m in enumerate(NORMS)])
    kinds = svm_limit.selection_kinds(runs).set_index("run_id")
    glob = frame[frame["selection"] == "global"].sort_values("signal_norm")
    for i in range(len(NORMS)):
        for column in limit_schema.LIMIT_SELECTION.names[1:]:
            a, b = kinds.loc[f"r{i}", column], glob.iloc[i][column]
            assert (np.isnan(a) and np.isnan(b)) or a == b


def test_every_crossing_is_bracketed_within_the_resolution_and_found_outside_the_scan():
    norms = [2.0**k for k in range(-1, 7)]
    out = svm_limit.limit_line(LINE, norms, sides, resolution=1.09, horizon=10**3, law=0.5)  # the scan misses it
    for _, one in out.groupby("selection"):
        one = one.sort_values("signal_norm")
        labels = sides(one).to_numpy(bool)
        m = one["signal_norm"].to_numpy()
        change = np.flatnonzero((labels[1:] != labels[:-1]).any(axis=1))
        assert len(change)  # a crossing inside the norms evaluated
        assert np.all(m[change + 1] / m[change] <= 1.09 * (1 + 1e-3))
    assert out["refined"].any()
