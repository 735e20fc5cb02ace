"""The dynamics figures (benign.figures.dynamics): the softmax of picked samples over training (Figures
3 and 6) and delayed generalization; each checked against the data it was given."""

import numpy as np
import pytest

from benign.figures import dynamics
from benign.synthetic import schema as syn_schema
from tests.helpers import frames
from tests.helpers.figures import assert_rendered

rng = np.random.default_rng(0)


def attention_rows(run_id, T, samples=4, noisy=(1, 2), unfitted=(2,), steps=range(0, 60, 10), cls=False, value=None):
    tokens = np.arange(-1 if cls else 0, T)
    rows = []
    for step in steps:
        for sample in range(samples):
            logits = rng.normal(size=tokens.size) + step / 10 * (tokens == 0)
            probs = np.exp(logits) / np.exp(logits).sum() if value is None else np.full(tokens.size, value)
            rows += [
                dict(
                    run_id=run_id,
                    step=step,
                    sample=sample,
                    token=int(t),
                    probability=float(p),
                    noisy=sample in noisy,
                    fitted=sample not in unfitted or step < 20,
                )  # fmt: skip
                for t, p in zip(tokens, probs)
            ]
    return rows


def test_pick_samples_by_kind_at_the_last_step():
    trace = frames.conform(attention_rows("r", T=4, samples=5, noisy=(1, 2, 4), unfitted=(2, 4)), syn_schema.ATTENTION)
    # sample 2 is fitted before step 20 and not at the end: judged at the last step
    assert dynamics.pick_samples(trace) == {"clean": 0, "noisy, fitted": 1, "noisy, not fitted": 2}
    every_noisy_fitted = frames.conform(attention_rows("r", T=4, unfitted=()), syn_schema.ATTENTION)
    assert dynamics.pick_samples(every_noisy_fitted)["noisy, not fitted"] is None
    # the figure takes the lowest seed whose run has every kind, else the lowest seed
    runs = frames.runs([dict(run_id="s1", seed=1), dict(run_id="s2", seed=2), dict(run_id="s3", seed=3)])
    att = frames.conform(attention_rows("s1", T=4, unfitted=()) + attention_rows("s2", T=4)
                         + attention_rows("s3", T=4), syn_schema.ATTENTION)  # fmt: skip
    assert dynamics._run_with_every_kind(runs, att)[0]["seed"] == 2
    assert dynamics._run_with_every_kind(runs.iloc[:1], att)[0]["seed"] == 1


@pytest.mark.parametrize("model", ["token", "encoder"])
def test_softmax_dynamics(tmp_path, model, drawn):
    settings = {"benign": (2000, 20.0), "harmful": (4500, 5.0), "not_overfitting": (1000, 80.0)}
    settings_index = {setting: i for i, setting in enumerate(settings)}
    run_rows, att = [], []
    for i, (setting, (d, norm)) in enumerate(settings.items()):
        run_rows.append(dict(run_id=f"{model}{i}", model=model, setting=setting, d=d, signal_norm=norm, seed=42))
        att += attention_rows(f"{model}{i}", T=8, cls=model == "encoder")
    # a diverged lower-seed run whose trace is NaN must be skipped, not drawn
    run_rows.append(
        dict(
            run_id="bad",
            model=model,
            setting="benign",
            seed=1,
            status="diverged",
            regime=None,
            train_loss=np.nan,
            test_loss=np.nan,
        )
    )
    att += attention_rows("bad", T=8, cls=model == "encoder", value=np.nan)
    runs = frames.runs(run_rows)
    attention = frames.conform(att, syn_schema.ATTENTION)
    dynamics.softmax_dynamics(runs, attention, tmp_path / "dyn", model=model)
    assert_rendered(tmp_path / "dyn")
    # three rows of sample kinds by three settings; each panel draws its sample's softmax over
    # every token against the step, from the ok run (the diverged NaN run is not drawn)
    panels = drawn["dyn"]
    assert len(panels) == 9
    for j, (setting, _) in enumerate(settings.items()):
        run_id = f"{model}{settings_index[setting]}"
        trace = attention[attention["run_id"] == run_id]
        picked = dynamics.pick_samples(trace)
        for i, (kind, _, _) in enumerate(dynamics.SAMPLE_KINDS):
            panel = panels[3 * i + j]
            if picked[kind] is None:
                assert panel["lines"] == [] and f"no {kind} sample" in panel["texts"]
                continue
            probs = trace[trace["sample"] == picked[kind]].pivot(index="step", columns="token", values="probability")
            assert len(panel["lines"]) == probs.shape[1]
            for (x, y), token in zip(panel["lines"], probs.columns):
                assert list(x) == list(probs.index) and np.allclose(y, probs[token])
        assert "seed 42" in panels[j]["title"]


NO_SELECTION = {name: np.nan for name, _ in syn_schema.SELECTION}


def delayed_tables(nan_in_ok_run=False):
    steps = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
    run_rows, curve_rows = [], []
    for seed in (1, 2, 3):
        run_rows.append(dict(run_id=f"s{seed}", setting="delayed", seed=seed))
        for k in steps:
            fit = min(1.0, k / 50)
            curve_rows.append(
                dict(
                    run_id=f"s{seed}",
                    step=k,
                    train_loss=1 - fit / 2,
                    test_loss=0.7,
                    train_acc=0.8 + 0.2 * fit,
                    test_acc=min(1.0, 0.5 + k / 400 + seed / 100),
                    train_acc_clean=1.0,
                    train_acc_noisy=fit,
                    **{
                        **NO_SELECTION,
                        "test_sel_relevant": min(1.0, k / 100),
                        "test_loss_normalised": max(0.1, 1 - k / 200),
                    },
                )
            )
    run_rows.append(dict(run_id="bad", setting="delayed", seed=4, status="diverged", regime=None))
    curve_rows += [
        dict(
            run_id="bad",
            step=k,
            train_loss=np.nan,
            test_loss=np.nan,
            train_acc=np.nan,
            test_acc=np.nan,
            train_acc_clean=np.nan,
            train_acc_noisy=np.nan,
            **NO_SELECTION,
        )
        for k in steps
    ]
    if nan_in_ok_run:
        curve_rows[3]["test_acc"] = np.nan
    return frames.runs(run_rows), frames.conform(curve_rows, syn_schema.CURVES)


def test_delayed_generalization(tmp_path, drawn):
    """Each curve is the mean over the ok runs' logged steps past 0 (the diverged run left out)."""
    runs, curves = delayed_tables()
    dynamics.delayed_generalization(runs, curves, tmp_path / "delayed", loss_threshold=0.5)
    assert_rendered(tmp_path / "delayed")
    top, bottom = drawn["delayed"]
    ok = (
        curves[curves["run_id"].isin(["s1", "s2", "s3"]) & (curves["step"] > 0)].groupby("step").mean(numeric_only=True)
    )
    for panel, columns in ((top, dynamics.DELAYED_LINES), (bottom, dynamics.DELAYED_LOSSES)):
        for (x, y), column in zip(panel["lines"], columns):
            assert list(x) == list(ok.index) and np.allclose(y, ok[column]), column


def test_delayed_generalization_refuses_nan_in_ok_run(tmp_path):
    runs, curves = delayed_tables(nan_in_ok_run=True)
    with pytest.raises(ValueError, match="non-finite"):
        dynamics.delayed_generalization(runs, curves, tmp_path / "delayed", loss_threshold=0.5)
