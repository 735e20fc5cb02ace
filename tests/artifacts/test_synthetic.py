"""The synthetic half of the artifact table (benign.artifacts.synthetic): its conditions and the
params it computes from the plan, each on a plan written by hand."""

from types import SimpleNamespace

from benign.artifacts import synthetic as entries
from benign.artifacts.table import ARTIFACTS


def plan(sweeps: dict, fits: dict | None = None, max_margin_runs: dict | None = None):
    """A plan's face as the conditions read it: {model: its sweeps' names}, the boundary fits."""
    models = {model: SimpleNamespace(sweeps=dict.fromkeys(names), block={}) for model, names in sweeps.items()}
    return SimpleNamespace(
        config=SimpleNamespace(models=models, fits=fits or {}), max_margin_runs=max_margin_runs or {}
    )


FITS = {"model": "token", "sweeps": ["atlas"], "refine": {"sweep": "atlas"}, "convergence": {"factor": 2}}


def test_each_condition_asks_for_what_its_artifacts_read():
    full = plan({"token": ["atlas", "atlas_check", "one_step", "delay_scan", "heatmap"], "token_p_w0": ["atlas_w0"],
                 "encoder": []}, FITS, {"token_p_w0": [{}]})  # fmt: skip
    for condition in (entries.has_boundary_fits, entries.has_delay_scan, entries.has_one_step,
                      entries.has_w_control, entries.has_predictor_check, entries.has_max_margin):  # fmt: skip
        assert condition(full), condition.__name__
    assert entries.has_heatmap(full, "token") and not entries.has_heatmap(full, "encoder")
    bare = plan({"token": ["atlas"]})
    assert not any(c(bare) for c in (entries.has_boundary_fits, entries.has_delay_scan, entries.has_max_margin))
    # the W-frozen control and the predictor's check need the token model's atlas fitted
    other = plan({"token": ["atlas_check"], "token_p_w0": ["atlas_w0"]}, dict(FITS, model="encoder"))
    assert not entries.has_w_control(other) and not entries.has_predictor_check(other)
    assert not entries.has_delayed(full)
    full.config.models["token"].block["delayed"] = {"steps": 100}
    assert entries.has_delayed(full)


def test_the_atlas_settings_hold_the_refinement_and_the_step_check_its_setting():
    assert entries.atlas_settings(plan({}, FITS)) == ["atlas", "atlas_refine"]
    assert entries.atlas_settings(plan({}, dict(FITS, refine=None))) == ["atlas"]
    assert entries.atlas_settings(plan({})) == []
    assert entries.step_check(plan({}, FITS)) == {"setting": "atlas_convergence", "factor": 2}
    assert entries.step_check(plan({}, dict(FITS, convergence=None))) is None


def test_every_entry_of_the_half_is_in_the_table_under_its_condition():
    mine = {key: a for key, a in ARTIFACTS.items() if a.home == entries.__name__}
    assert mine and set(mine) == set(entries.ENTRIES)
    gated = {a.name for a in mine.values() if a.when is entries.has_boundary_fits}
    assert {"regime_boundaries", "regime_map"} <= gated
