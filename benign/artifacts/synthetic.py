"""The synthetic half of the artifact table: its figures and tables, each entry holding its
function (its input kinds are in synthetic_inputs.py).

Adding a figure is its plot function, one entry here and its caption
(workflow/report/<name>.rst).
"""

from __future__ import annotations

from benign.analysis.theory import atlas_view, sweeps_view
from benign.artifacts import synthetic_inputs
from benign.artifacts.entry import (
    ALL,
    FITS,
    MODEL,
    MODEL_NAME,
    Artifact,
    FromPlan,
    Key,
    SweepOf,
    Value,
    View,
    entries,
)
from benign.artifacts.synthetic_inputs import (
    ALIGNMENT,
    ALONG_TIME_TABLE,
    ATTENTION,
    CURVES,
    FITS_TABLE,
    LIMIT,
    LIMIT_SELECTION,
    POINTS,
    REGIME_MODEL,
    RUNS,
    SWEEP_CURVES,
    SWEEP_RUNS,
)
from benign.figures import atlas, dynamics, heatmaps, max_margin, one_step, projection
from benign.plan.refinement_job import convergence_setting, refine_setting
from benign.synthetic import registry
from benign.tables import (
    along_time,
    boundaries,
    delay_scan,
    gap_dynamics,
    generalization_times,
    n_laws,
    predictor_check,
    step_convergence,
    synthetic,
    w_control,
)
from benign.tables import limit as limit_table
from benign.tables import max_margin as max_margin_table
from benign.tables import one_step as one_step_table


def prefix(model: str) -> str:
    """A per-model artifact's file prefix (benign.synthetic.registry)."""
    return registry.MODELS[model].artifact_prefix


# The token sweeps that artifacts read by name (docs/regimes.md): the delay scan, the one-step map,
# the predictor's check off the atlas's grid; and the token_p_w0 sweep of the W-frozen control.
DELAY_SCAN = "delay_scan"
ONE_STEP = "one_step"
PREDICTOR_CHECK = "atlas_check"
W_CONTROL = "atlas_w0"


# When an artifact is built: each condition a function of the plan, benign.plan.load.Plan (not
# imported: the plan holds both halves, and this half imports nothing of the real one).
def _sweeps(plan, model: str) -> dict:
    configured = plan.config.models.get(model)
    return configured.sweeps if configured else {}


def has_boundary_fits(plan) -> bool:
    """synthetic.boundary_fits: the atlas is fitted."""
    return bool(plan.config.fits)


def has_delayed(plan) -> bool:
    """synthetic.token.delayed: the long benign runs."""
    return "token" in plan.config.models and bool(plan.config.models["token"].block.get("delayed"))


def has_heatmap(plan, model: str) -> bool:
    """A sweep of ``model`` named heatmap."""
    return "heatmap" in _sweeps(plan, model)


def has_delay_scan(plan) -> bool:
    return DELAY_SCAN in _sweeps(plan, "token")


def has_one_step(plan) -> bool:
    return ONE_STEP in _sweeps(plan, "token")


def has_w_control(plan) -> bool:
    """The token model's atlas fitted, and its W-frozen twin (token_p_w0's sweep atlas_w0) trained."""
    return plan.config.fits.get("model") == "token" and W_CONTROL in _sweeps(plan, "token_p_w0")


def has_predictor_check(plan) -> bool:
    """The token model's atlas fitted, and its check off the grid (the token sweep atlas_check) trained."""
    return plan.config.fits.get("model") == "token" and PREDICTOR_CHECK in _sweeps(plan, "token")


def has_max_margin(plan) -> bool:
    """max_margin: the attention-SVM check's runs."""
    return bool(plan.max_margin_runs)


# Params computed from the plan
def atlas_settings(plan) -> list[str]:
    """The settings of the fitted atlas's runs: its sweeps, and its refinement's where it is refined."""
    fits = plan.config.fits
    refine = fits.get("refine")
    return [*fits.get("sweeps", []), *([refine_setting(refine["sweep"])] if refine else [])]


def step_check(plan) -> dict | None:
    """The step check's setting and step factor (synthetic.boundary_fits.convergence), if it runs."""
    fits = plan.config.fits
    check = fits.get("convergence")
    return check and {"setting": convergence_setting(fits["refine"]["sweep"]), "factor": check["factor"]}


# the runs and curves of synthetic.boundary_fits' sweeps, which the atlas's views read
FITTED = {"runs": SWEEP_RUNS(FITS), "curves": SWEEP_CURVES(FITS)}


def of_sweep(model: str, sweep: str) -> dict:
    """The runs and curves of one named sweep of ``model``: an artifact of that sweep waits for its jobs alone."""
    return {"runs": SWEEP_RUNS(SweepOf(model, sweep)), "curves": SWEEP_CURVES(SweepOf(model, sweep))}


def atlas_of(*gives: str) -> View:
    """The atlas's ok runs, each once, their labels at each horizon (and, as asked, the criteria
    and the runs' curves)."""
    return View(atlas_view, reads=("runs", "curves"), gives=gives,
                params={"settings": FromPlan(atlas_settings), "horizons": Key("synthetic.boundary_fits.horizons"),
                        "regime": Key("synthetic.regime"), "convergence": FromPlan(step_check)})  # fmt: skip


# the atlas's labels at every horizon of synthetic.boundary_fits.along_time, from the first step
ALONG_TIME = View(atlas_view, reads=("runs", "curves"), gives=("runs", "labels", "criteria"),
                  params={"settings": FromPlan(atlas_settings), "horizons": Key("synthetic.boundary_fits.along_time"),
                          "regime": Key("synthetic.regime")})  # fmt: skip
# the same, with the atlas's curves: what the limit's tables compare with the runs
LIMIT_VIEW = View(
    atlas_view, reads=("runs", "curves"), gives=("runs", "curves", "labels", "criteria"), params=ALONG_TIME.params
)
SWEEPS = View(
    sweeps_view, reads=("runs", "curves"), gives=("runs", "curves"), params={"settings": FromPlan(atlas_settings)}
)
# the atlas's runs alone: what a figure drawn from a fitted table reads for the fixed parameters it states
ATLAS_RUNS = View(sweeps_view, reads=("runs", "curves"), gives=("runs",), params=SWEEPS.params)
# the atlas's fitted tables: their labels, at the claimed resolution
ATLAS_TABLE = dict(section="Tables", when=has_boundary_fits, inputs=FITTED,
                   params={"resolution_limit": Key("synthetic.boundary_fits.resolution")})  # fmt: skip
PER_MODEL = dict(prefix=prefix)

KINDS = synthetic_inputs.KINDS
ENTRIES = entries(
    __name__,
    synthetic_inputs.__name__,
    Artifact("token_projection", "figure", "Figure 1", "token projection under a hand-set query", "Synthetic",
             function=projection.token_projection, inputs={"points": POINTS()}, params={"cfg": Key("synthetic.projection")}),
    Artifact("softmax_dynamics", "figure", "Figures 3, 6", "softmax dynamics", "Synthetic",
             function=dynamics.softmax_dynamics,
             inputs={"runs": RUNS(MODEL), "attention": ATTENTION(MODEL)}, params={"model": MODEL_NAME},
             models={"token": "Figure 3", "encoder": "Figure 6", "token_p_w0": "", "token_p_identity": ""}, **PER_MODEL),
    Artifact("loss_heatmap", "figure", "Figures 5, 7", "loss/accuracy heatmaps over (d, ||mu||), the config's grid",
             "Synthetic", when=has_heatmap, function=heatmaps.loss_heatmap,
             inputs={"runs": RUNS(MODEL), "fits": FITS_TABLE(MODEL)},
             params={"model": MODEL_NAME, "c1": Key("synthetic.boundaries.c1"), "c2": Key("synthetic.boundaries.c2")},
             models={"token": "Figure 5", "encoder": "Figure 7"}, **PER_MODEL),
    Artifact("delayed_generalization", "figure", "Section 4", "delayed generalization of the benign setting",
             "Synthetic", when=has_delayed, function=dynamics.delayed_generalization,
             inputs={"runs": RUNS("token"), "curves": CURVES("token")},
             params={"loss_threshold": Key("synthetic.regime.loss_threshold")}),
    Artifact("synthetic_regimes", "table", "Figures 3, 6", "named settings of every model, final metrics and "
             "regime", "Tables", function=synthetic.synthetic_regimes,
             inputs={"runs": RUNS(ALL), "curves": CURVES(ALL)},
             params={"criteria": Key("synthetic.regime"), "horizons": Key("synthetic.regimes_table.horizons")}),
    Artifact("step_convergence", "table", "Theorem 4.1", "the step check: the atlas's crossings at the step "
             "halved and the steps doubled, per boundary and d, with the verdict", "Tables", when=has_boundary_fits,
             function=step_convergence.step_convergence, inputs=FITTED, view=atlas_of("convergence", "runs")),
    Artifact("regime_boundaries", "table", "Theorem 4.1", "regime boundaries: one fit per boundary and horizon "
             "over the atlas, beside the theory's exponents", function=boundaries.regime_boundaries,
             view=atlas_of("runs", "labels", "criteria", "convergence"),
             **{**ATLAS_TABLE, "params": {**ATLAS_TABLE["params"], "margin": Key("synthetic.boundary_fits.margin")}}),
    Artifact("boundaries_along_time", "table", "Theorem 4.1", "the boundaries along time: law (i) at every "
             "horizon from the first step, the drift between horizons, the first step's closed-form law beside the "
             "selection labels", "Tables", when=has_boundary_fits, function=along_time.boundaries_along_time,
             inputs=FITTED, view=ALONG_TIME),
    Artifact("boundary_limits", "table", "Theorem 4.1", "the selection boundaries at step 1, at the last horizon "
             "and at the computed limit (the attention-SVM direction of the W-frozen twin's and of the global selection), side "
             "by side",
             "Tables", when=has_boundary_fits, function=limit_table.boundary_limits,
             inputs={**FITTED, "limit": LIMIT()}, view=ALONG_TIME, params={"margin": Key("synthetic.boundary_fits.margin")}),
    Artifact("limit_shifts", "table", "Theorem 4.1", "the plateau's shift from the computed limit per (d, n) "
             "cell, the limit beside the first step's law, and how often the runs hold the global selection's kinds",
             "Tables", when=has_boundary_fits, function=limit_table.limit_shifts,
             inputs={**FITTED, "limit": LIMIT(), "selection": LIMIT_SELECTION()}, view=LIMIT_VIEW),
    Artifact("n_laws", "table", "Theorem 4.1", "the exponent of n per boundary and horizon: law (i)'s b beside the "
             "theorem's, the first step's -1/4 and a log factor, its local slopes, and the flipped samples' own "
             "crossings", "Tables", when=has_boundary_fits, function=n_laws.n_laws, inputs=FITTED,
             view=atlas_of("runs", "labels", "criteria")),
    Artifact("regime_model", "table", "Theorem 4.1", "the fitted regime model that `python -m benign regime` "
             "reads", function=boundaries.regime_model, view=atlas_of("runs", "labels", "convergence"), **ATLAS_TABLE),
    Artifact("predictor_check", "table", "beyond the paper", "the regime predictor checked off the atlas's grid: "
             "each check seed's crossing against the predicted 95% interval of a new crossing, coverage over cells",
             "Tables", when=has_predictor_check, function=predictor_check.predictor_check,
             inputs={**of_sweep("token", PREDICTOR_CHECK), "model": REGIME_MODEL()},
             params={"sweep": Value(PREDICTOR_CHECK), "regime": Key("synthetic.regime")}),
    Artifact("w_control", "table", "beyond the paper", "the atlas's W-frozen control: how far training W moves "
             "each boundary's crossing, per d, n and horizon", "Tables", when=has_w_control, function=w_control.w_control,
             inputs={**FITTED, "control_runs": SWEEP_RUNS(SweepOf("token_p_w0", W_CONTROL)),
                     "control_curves": SWEEP_CURVES(SweepOf("token_p_w0", W_CONTROL))},
             params={"atlas": Key("synthetic.boundary_fits.sweeps"), "control": Value(W_CONTROL),
                     "horizons": Key("synthetic.boundary_fits.horizons"), "regime": Key("synthetic.regime")}),
    Artifact("one_step_regime", "table", "beyond the paper", "the large-step regime: where one step at the "
             "paper's fixed lr fits the flipped labels, per n and ||mu||", "Tables", when=has_one_step,
             function=one_step_table.one_step_regime, inputs=of_sweep("token", ONE_STEP),
             params={"sweep": Value(ONE_STEP), "criteria": Key("synthetic.regime")}),
    Artifact("gap_dynamics", "table", "Section 4", "the attention gap's clock g in the benign band: linear "
             "growth, its rate against ||mu||, d and n, and the local slope of r", "Tables", when=has_boundary_fits,
             function=gap_dynamics.gap_dynamics, inputs=FITTED, view=atlas_of("runs", "labels", "curves")),
    Artifact("generalization_times", "table", "Section 4", "fit and generalization times as censored survival "
             "times (log-normal AFT on SNR, 1/SNR^2 and log SNR, by where the runs head) and each run's signed delay",
             "Tables", when=has_boundary_fits, function=generalization_times.generalization_times, inputs=FITTED,
             view=SWEEPS, params={"bands": Key("synthetic.boundary_fits.survival_bands"), "regime": Key("synthetic.regime")}),
    Artifact("regime_map", "figure", "Theorem 4.1", "the regime atlas per n and horizon, with the fitted and "
             "the theory's boundaries", "Synthetic", when=has_boundary_fits, function=atlas.regime_map,
             inputs={**FITTED, "fits": FITS_TABLE()}, view=atlas_of("runs", "labels")),
    Artifact("step_convergence", "figure", "Theorem 4.1", "the step check: each boundary's crossing shift "
             "per d when the step is halved, beside the crossings' own resolution", "Synthetic",
             when=has_boundary_fits, function=atlas.step_convergence, inputs={**FITTED},
             view=atlas_of("convergence", "runs"), caption="step_convergence_figure"),
    Artifact("one_step_regime", "figure", "beyond the paper", "the large-step regime: the share of flipped "
             "labels one step at the paper's lr fits, over (d, ||mu||) per n", "Synthetic", when=has_one_step,
             function=one_step.one_step_regime, inputs=of_sweep("token", ONE_STEP),
             params={"sweep": Value(ONE_STEP), "criteria": Key("synthetic.regime")}, caption="one_step_regime_figure"),
    Artifact("boundary_scaling", "figure", "Theorem 4.1", "each fitted exponent against the horizon, beside the "
             "theory's", "Synthetic", when=has_boundary_fits, function=atlas.boundary_scaling,
             inputs={**FITTED, "fits": FITS_TABLE()}, view=ATLAS_RUNS),
    Artifact("boundaries_along_time", "figure", "Theorem 4.1", "each boundary's a, b and c against the "
             "normalised time from the first step, beside the theory's and the first step's law", "Synthetic",
             when=has_boundary_fits, function=atlas.boundaries_along_time,
             inputs={**FITTED, "path": ALONG_TIME_TABLE()}, view=ATLAS_RUNS, caption="boundaries_along_time_figure"),
    Artifact("gap_clock", "figure", "Section 4", "the attention gap's clock g and the test loss r against "
             "the steps in the benign band, and the clock's rate against ||mu||", "Synthetic", when=has_boundary_fits,
             function=atlas.gap_clock, inputs=FITTED, view=atlas_of("runs", "labels", "curves")),
    Artifact("generalization_delay", "figure", "Section 4", "fit and generalization times as Kaplan-Meier "
             "curves per SNR band", "Synthetic", when=has_boundary_fits, function=atlas.generalization_delay,
             inputs=FITTED, view=SWEEPS, params={"bands": Key("synthetic.boundary_fits.survival_bands")}),
    Artifact("delay_scan", "table", "Section 4", "the benign band: does attention select after the flipped "
             "labels are fitted?", "Tables", when=has_delay_scan, function=delay_scan.delay_scan,
             inputs=of_sweep("token", DELAY_SCAN), params={"sweep": Value(DELAY_SCAN)}),
    Artifact("max_margin", "table", "", "attention-SVM check: cosines with baselines, selections, margins, "
             "local optimality, rate fits", "Tables", when=has_max_margin, function=max_margin_table.max_margin,
             inputs={"frame": ALIGNMENT()}, params={"horizons": Key("max_margin.horizons")}),
    Artifact("max_margin_alignment", "figure", "", "attention-SVM check: cosine of the direction with p^mm over "
             "training", "Synthetic", when=has_max_margin, function=max_margin.max_margin_alignment,
             inputs={"frame": ALIGNMENT()}),
)  # fmt: skip
