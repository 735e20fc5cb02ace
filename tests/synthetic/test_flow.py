"""The gradient flow with an adaptive step (benign/synthetic/flow.py): it starts with gradient
descent's first step, tracks gradient descent where both reach, converges as its tolerance
shrinks, reaches times gradient descent cannot, and resumes from a checkpoint to the same result."""

from __future__ import annotations

import dataclasses
import signal

import numpy as np
import pandas as pd
import pytest
import torch

from benign.analysis.crossings import crossings
from benign.analysis.theory import Criteria, regimes_at
from benign.core import stopping
from benign.core.schema import MEASURED
from benign.plan.schema import default
from benign.synthetic import costs, flow, models
from benign.synthetic.spec import RunSpec, lr_for
from benign.synthetic.trainer import train_batch

NORMS = [4.0 * 2 ** (i / 2) for i in range(9)]  # 4 to 64: the selection boundary of d = 10^4, n = 10 lies inside
LINE = dict(n=10, T=8, d=10_000, engine="gram", step_size=5.0, n_test=200, seed=1)


def line(integrator: str, steps: int, **kw) -> list[RunSpec]:
    return [RunSpec(**LINE, signal_norm=m, steps=steps, integrator=integrator, **kw) for m in NORMS]


def batch(model: str = "token"):
    return models.build(model, n=10, T=8, d=10_000, sigma=1.0, n_test=50, seed=1, signal_norms=NORMS, rhos=[0.1] * 9,
                        etas=[0.2] * 9, lrs=[lr_for(5.0, 1.0, 10_000)] * 9, engine="gram")  # fmt: skip


CHECKS = (1, 10, 100, 1000, 4000)  # steps at which logits are compared


def flow_scores(model: str, tol: float) -> dict[int, torch.Tensor]:
    """The training logits of the flow at tolerance ``tol`` at every step of CHECKS."""
    m, clock = batch(model), flow.Clock()
    scores, out = m.scores(), {}
    for k in CHECKS:
        while clock.time + clock.dt <= k:
            scores = flow.advance(m, clock, tol, scores)
        off_grid = flow.reach(m, clock, k)
        out[k] = m.scores()
        if off_grid:
            m.undo()
    return out


def gd_scores(model: str) -> dict[int, torch.Tensor]:
    m, out = batch(model), {}
    for k in range(1, max(CHECKS) + 1):
        m.step()
        if k in CHECKS:
            out[k] = m.scores()
    return out


def gap(a: dict, b: dict) -> float:
    """The largest difference of any logit of any run between two trajectories, over CHECKS."""
    return max(float((a[k] - b[k]).abs().max()) for k in CHECKS)


@pytest.mark.parametrize("model", ["token", "token_p_w0", "token_p_identity"])
def test_the_flows_logits_track_gradient_descents(model):
    """Step 1 is gradient descent's first step exactly; at the default tolerance the logits
    (up to about 8) stay within 0.03 of gradient descent's over 4000 steps (measured 0.017)."""
    gd, fl = gd_scores(model), flow_scores(model, flow.TOL)
    assert torch.equal(fl[1], gd[1])
    assert gap(fl, gd) < 0.03
    assert max(float(s.abs().max()) for s in gd.values()) > 5  # the logits moved far beyond the tolerance


@pytest.mark.parametrize("model", ["token", "token_p_identity"])
def test_the_flow_converges_as_its_tolerance_shrinks(model):
    coarse, mid, fine = (flow_scores(model, tol) for tol in (4 * flow.TOL, flow.TOL, flow.TOL / 4))
    assert gap(mid, fine) < 0.5 * gap(coarse, mid)


def test_the_flow_labels_a_line_of_norms_as_gradient_descent_does():
    """The curves of a line of ||mu|| through the selection boundary, by both integrators to
    step 4000: close at every logged step, and each label's crossing along ||mu|| in the same
    bracket at every horizon."""
    gd = train_batch(line("gd", 4000, log_points=41), device="cpu")
    fl = train_batch(line("flow", 4000, log_points=41), device="cpu")
    assert (gd[0]["iterations"] == 4000).all() and (fl[0]["iterations"] < 400).all()  # measured 291
    a, b = (frames[1].sort_values(["run_id", "step"]).reset_index(drop=True) for frames in (gd, fl))
    assert a["step"].tolist() == b["step"].tolist()
    for column, within in [("test_loss_normalised", 0.01), ("test_sel_relevant", 0.03), ("test_err_hardmax", 0.03),
                           ("train_loss", 0.005), ("train_acc_noisy", 0.5)]:  # fmt: skip
        assert np.abs(a[column].to_numpy() - b[column].to_numpy()).max() <= within, column
    criteria = Criteria(**default("synthetic.regime"))
    horizons = [10, 100, 1000, 4000]
    brackets = []
    for runs, curves in ((gd[0], a), (fl[0], b)):
        labels = regimes_at(curves, horizons, criteria).merge(runs[["run_id", "d", "n", "seed", "signal_norm"]])
        brackets.append(
            pd.concat(
                crossings(labels[labels["horizon"] == h], side).assign(horizon=h, label=side)
                for h in horizons
                for side in ("overfits", "selects", "selects_hardmax")
            ).reset_index(drop=True)
        )
    pd.testing.assert_frame_equal(brackets[0], brackets[1])
    selects = brackets[0][(brackets[0]["label"] == "selects") & (brackets[0]["horizon"] == 4000)]
    assert selects["censored"].eq("").all()  # the line does cross the selection boundary


def test_the_flow_reaches_time_1e8_in_few_steps(caplog):
    """Step 2 x 10^7 at step size 5, time 10^8: gradient descent's 2 x 10^7 steps; the flow's a
    few hundred (measured about 500), within the planner's estimate."""
    specs = [RunSpec(**LINE, signal_norm=m, steps=20_000_000, integrator="flow", log_points=41) for m in NORMS[::2]]
    with caplog.at_level("INFO", logger="benign"):
        runs, curves, _ = train_batch(specs, device="cpu", progress_every=0.0)
    iterations = int(runs["iterations"].iloc[0])
    assert iterations < 2000 and iterations <= flow.iterations(20_000_000, flow.TOL, 42)
    assert (runs["status"] == "ok").all() and curves["step"].max() == 20_000_000
    assert "of 1e+08 (step" in caplog.text  # progress lines name the time reached
    gd_cost = costs.token_batch(len(specs), dataclasses.asdict(dataclasses.replace(specs[0], integrator="gd",
                                                                                      flow_tol=None)), "cpu")[1]  # fmt: skip
    flow_cost = costs.token_batch(len(specs), dataclasses.asdict(specs[0]), "cpu")[1]
    assert flow_cost < gd_cost / 1000


def test_a_shorter_flow_run_is_a_prefix_of_a_longer_one():
    """The flow's steps depend on the state alone, not on the horizon or the logged steps."""
    curves = []
    for specs in (line("flow", 1000, log_every=100), line("flow", 3000, log_every=250)):
        frame = train_batch(specs, device="cpu")[1]
        norm = {s.run_id: s.signal_norm for s in specs}  # the run ids name the horizon
        curves.append(frame.assign(run_id=frame["run_id"].map(norm)).set_index(["run_id", "step"]).sort_index())
    short, long = curves
    shared = short.index.intersection(long.index)
    assert len(shared) == 3 * len(NORMS)  # steps 0, 500 and 1000, logged after different steps
    pd.testing.assert_frame_equal(short.loc[shared], long.loc[shared], check_exact=True)


def _strip(frames):
    runs, curves, attention = frames
    return runs.drop(columns=[c for c in MEASURED if c in runs]), curves, attention


@pytest.mark.parametrize("how", ["stop", "crash"])
def test_a_flow_run_resumes_from_its_checkpoint_to_the_same_result(tmp_path, monkeypatch, how):
    """Stopped by the scheduler's signal (saved then) or killed (its last periodic save), the
    batch resumes from the clock it saved: time, step length, updates and logged steps."""
    specs = line("flow", 4000, log_points=41, record_attention=True)[:4]
    fresh = _strip(train_batch(specs, device="cpu"))
    checkpoint = tmp_path / "running-x.pt"
    advance, calls = flow.advance, []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 120:
            if how == "stop":
                stopping.STOP.signal = signal.SIGTERM
            else:
                raise KeyboardInterrupt
        return advance(*args)

    monkeypatch.setattr(flow, "advance", interrupted)
    try:
        with pytest.raises(stopping.Stopped if how == "stop" else KeyboardInterrupt):
            train_batch(specs, device="cpu", checkpoint=checkpoint, checkpoint_every=50)
    finally:
        stopping.STOP.signal = None
    saved = torch.load(checkpoint, weights_only=True)["flow"]
    assert 0 < saved["time"] < 4000 and saved["logged"] > 0 and saved["iterations"] >= 50
    monkeypatch.setattr(flow, "advance", advance)
    resumed = _strip(train_batch(specs, device="cpu", checkpoint=checkpoint, checkpoint_every=50))
    assert not checkpoint.exists()
    for a, b in zip(resumed, fresh):
        pd.testing.assert_frame_equal(a, b, check_exact=True)


@pytest.mark.parametrize("model", ["token", "token_p_w0"])
def test_undo_takes_a_kept_step_back_exactly(model):
    """undo() after steps of several lengths, taken with keep, gives back the state exactly (the
    flow's rejected and logging steps never copy the N x N state); a step kept writes what one in
    place does, to the rounding (one is a fused product, the other not)."""
    m = batch(model)
    for _ in range(30):
        m.step(3.0)
    before = {k: v.clone() for k, v in m.state().items()}
    for dt in (0.5, 40.0):
        m.step(dt, keep=True)
        kept = {k: v.clone() for k, v in m.state().items()}
        m.undo()
        assert all(torch.equal(m.state()[k], before[k]) for k in before)
        m.step(dt)
        assert torch.equal(m.state()["c"], kept["c"])
        assert torch.allclose(m.state()["A"], kept["A"], rtol=1e-12, atol=1e-15)
        m.load_state(before)
