"""The attention-SVM figure (benign.figures.max_margin): per model, the mean cosine over seeds
against the step, one line per setting; then the selections at the last step of the first model."""

import numpy as np
import pytest

from benign.figures import max_margin
from benign.synthetic import schema as syn_schema
from tests.helpers import frames
from tests.helpers.figures import assert_rendered

STEPS = [0, 1, 10, 100]


# the columns this figure does not draw, at a value each
UNDRAWN = dict(train_loss=0.1, direction_norm=5.0, svm_norm=4.0, margin_ratio=1.0, min_margin_clean=1.0,
               min_margin_noisy=1.0, selection_changed=False, noisy_agrees=1.0, cosine_random=0.1, cosine_early=0.5,
               cosine_relevant=0.6, locally_optimal=1.0, test_err_svm=0.0, test_svm_agreement=1.0)  # fmt: skip


def alignment_rows(model, setting, seed, d, signal_norm, rng):
    base = {**{k: v for k, v in frames.RUN_DEFAULTS.items() if k in syn_schema.ALIGNMENT.names}, **UNDRAWN,
            "model": model, "setting": setting, "seed": seed, "d": d, "signal_norm": signal_norm}  # fmt: skip
    return [
        dict(base, step=step, cosine=float(rng.uniform(0.2, 1.0)), clean_signal=float(rng.uniform()),
             noisy_signal=float(rng.uniform()), noisy_opposite=float(rng.uniform()), noisy_noise=float(rng.uniform()))
        for step in STEPS
    ]  # fmt: skip


@pytest.fixture
def frame():
    rng = np.random.default_rng(3)
    rows = []
    for model in ("token_p_w0", "token"):
        for setting, d, norm in (("benign", 2000, 20.0), ("harmful", 4500, 5.0)):
            for seed in (42, 314):
                rows += alignment_rows(model, setting, seed, d, norm, rng)
    return frames.conform(rows, syn_schema.ALIGNMENT)


def test_each_line_is_the_mean_cosine_over_seeds_and_the_bars_the_last_selections(tmp_path, frame, drawn):
    max_margin.max_margin_alignment(frame, tmp_path / "svm")
    assert_rendered(tmp_path / "svm")
    *model_panels, bars = drawn["svm"]
    assert len(model_panels) == 2
    for panel, model in zip(model_panels, ("token_p_w0", "token")):
        assert panel["title"].startswith(model)
        runs = frame[(frame["model"] == model) & (frame["step"] > 0)]  # step 0 is not drawn on log axes
        settings = list(dict.fromkeys(runs["setting"]))
        assert len(panel["lines"]) == len(settings) + 1  # and the line at cosine 1
        for (x, y), setting in zip(panel["lines"], settings):
            mean = runs[runs["setting"] == setting].groupby("step")["cosine"].mean()
            assert list(x) == list(mean.index) and np.allclose(y, mean), (model, setting)
    last = frame[(frame["model"] == "token_p_w0") & (frame["step"] == STEPS[-1])]
    means = last.groupby("setting", sort=False)[list(max_margin.SELECTIONS)].mean()
    # the bars, selection by selection, each over the settings
    assert np.allclose(bars["bars"], means.to_numpy().T.ravel())


def test_no_runs_or_a_nan_cosine_is_refused(tmp_path, frame):
    with pytest.raises(ValueError, match="no runs"):
        max_margin.max_margin_alignment(frame.iloc[:0], tmp_path / "empty")
    frame.loc[frame.index[1], "cosine"] = np.nan
    with pytest.raises(ValueError):
        max_margin.max_margin_alignment(frame, tmp_path / "nan")
