"""The one table of the workflow's artifacts: every figure and table, what it reads, the config
keys it depends on, when it is built, and the paper's number.

From this table the workflow generates the render rules (workflow/rules/render.smk),
``all_outputs()`` and the report's categories; ``python -m benign artifacts`` writes the artifact
index of the README and docs/artifacts.md; the tests take their lists from it. Adding a figure
is its plot function, one entry here and its caption (workflow/report/<name>.rst).

A generated artifact is drawn by ``function(stem=..., **inputs, **params)``, each input read by
its kind (:data:`INPUT_KINDS`) and, with a ``view``, first passed through it (benign.analysis.
theory: the atlas's runs and labels, or the runs of some sweeps). Torch-free: the workflow reads
it at parse time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# What an input names: a kind (how it is read), and for a synthetic table whose model:
# "@fits" the model of synthetic.boundary_fits, "@token", or "@all" every configured model.
INPUT_KINDS = ("runs", "curves", "attention", "fits", "alignment", "points", "real_runs", "real_attention",
               "real_curves")  # fmt: skip
# When an artifact is built (benign.config.artifacts.built): always, or only if the config has ...
CONDITIONS = {
    "always": "always",
    "delayed": "synthetic.token.delayed",
    "heatmap": "a sweep named heatmap (per model)",
    "boundary_fits": "synthetic.boundary_fits",
    "delay_scan": "the token sweep delay_scan",
    "max_margin": "max_margin",
    "real": "real.use",
}


@dataclass(frozen=True)
class Artifact:
    """One figure (PNG and PDF) or table (CSV and Markdown) under results/."""

    name: str  # file stem under results/figures/ or results/tables/; its caption is workflow/report/<name>.rst
    kind: str  # "figure" or "table"
    paper: str  # the paper's number as the authors' code maps it, the result it tests, or ""
    title: str  # what it shows, in a line
    section: str  # the report's category
    when: str = "always"  # a key of CONDITIONS
    function: str = ""  # "module:function"; empty for a hand-written rule (per model, per eta group)
    inputs: dict = field(default_factory=dict)  # {argument: "<kind>[@<model>]"}
    params: dict = field(default_factory=dict)  # {argument: a config key path, or "@<workflow constant>"}
    view: str = ""  # "module:function" reading (runs, curves) before the function, with view_params
    view_params: dict = field(default_factory=dict)
    stems: tuple = ()  # a hand-written rule's file stems, if not just ``name`` ("{prefix}" per model)
    models: dict = field(default_factory=dict)  # per model: {model: its paper number}, for the index

    @property
    def rule(self) -> str:
        return f"{self.kind}_{self.name}"

    @property
    def extensions(self) -> tuple[str, str]:
        return (".png", ".pdf") if self.kind == "figure" else (".csv", ".md")

    @property
    def folder(self) -> str:
        return f"results/{self.kind}s"


ATLAS = dict(view="benign.analysis.theory:atlas_view",
             view_params={"settings": "@atlas_settings", "horizons": "synthetic.boundary_fits.horizons",
                          "regime": "synthetic.regime"})  # fmt: skip
SWEEPS = dict(view="benign.analysis.theory:sweeps_view", view_params={"settings": "@atlas_settings"})
FITTED = {"runs": "runs@fits", "curves": "curves@fits"}
# the atlas's fitted tables: their labels, at the claimed resolution
ATLAS_TABLE = dict(section="Tables", when="boundary_fits", inputs=FITTED,
                   params={"resolution_limit": "synthetic.boundary_fits.resolution"}, **ATLAS)  # fmt: skip

ARTIFACTS = {
    a.name: a
    for a in (
        Artifact("token_projection", "figure", "Figure 1", "token projection under a hand-set query", "Synthetic",
                 function="benign.figures.projection:token_projection", inputs={"points": "points"},
                 params={"cfg": "synthetic.projection"}),
        Artifact("softmax_dynamics", "figure", "Figures 3, 6", "softmax dynamics", "Synthetic",
                 stems=("{prefix}softmax_dynamics",),
                 models={"token": "Figure 3", "encoder": "Figure 6", "token_p_w0": "", "token_p_identity": ""}),
        Artifact("loss_heatmap", "figure", "Figures 5, 7", "loss/accuracy heatmaps over (d, ||mu||), the config's grid",
                 "Synthetic", when="heatmap", stems=("{prefix}loss_heatmap",),
                 models={"token": "Figure 5", "encoder": "Figure 7"}),
        Artifact("delayed_generalization", "figure", "Section 4", "delayed generalization of the benign setting",
                 "Synthetic", when="delayed", function="benign.figures.dynamics:delayed_generalization",
                 inputs={"runs": "runs@token", "curves": "curves@token"},
                 params={"loss_threshold": "synthetic.regime.loss_threshold"}),
        Artifact("synthetic_regimes", "table", "Figures 3, 6", "named settings of every model, final metrics and "
                 "regime", "Tables", function="benign.tables.synthetic:synthetic_regimes",
                 inputs={"runs": "runs@all", "curves": "curves@all"},
                 params={"criteria": "synthetic.regime", "horizons": "synthetic.regimes_table.horizons"}),
        Artifact("regime_boundaries", "table", "Theorem 4.1", "regime boundaries: one fit per boundary and horizon "
                 "over the atlas, beside the theory's exponents", function="benign.tables.boundaries:regime_boundaries",
                 **ATLAS_TABLE),
        Artifact("regime_model", "table", "Theorem 4.1", "the fitted regime model that `python -m benign regime` "
                 "reads", function="benign.tables.boundaries:regime_model", **ATLAS_TABLE),
        Artifact("gap_dynamics", "table", "Section 4", "the attention gap's clock g in the benign band: linear "
                 "growth, its rate against ||mu||, d and n, and the local slope of r", "Tables", when="boundary_fits",
                 function="benign.tables.gap_dynamics:gap_dynamics", inputs=FITTED, **ATLAS),
        Artifact("generalization_times", "table", "Section 4", "fit and generalization times as censored survival "
                 "times (Weibull AFT on SNR, 1/SNR^2 and log SNR) and each run's delay", "Tables", when="boundary_fits",
                 function="benign.tables.generalization_times:generalization_times", inputs=FITTED,
                 params={"bands": "synthetic.boundary_fits.survival_bands"}, **SWEEPS),
        Artifact("regime_map", "figure", "Theorem 4.1", "the regime atlas per n and horizon, with the fitted and "
                 "the theory's boundaries", "Synthetic", when="boundary_fits",
                 function="benign.figures.atlas:regime_map", inputs={**FITTED, "fits": "fits"}, **ATLAS),
        Artifact("boundary_scaling", "figure", "Theorem 4.1", "each fitted exponent against the horizon, beside the "
                 "theory's", "Synthetic", when="boundary_fits", function="benign.figures.atlas:boundary_scaling",
                 inputs={"fits": "fits"}),
        Artifact("gap_clock", "figure", "Section 4", "the attention gap's clock g and the test loss r against "
                 "the steps in the benign band, and the clock's rate against ||mu||", "Synthetic", when="boundary_fits",
                 function="benign.figures.atlas:gap_clock", inputs=FITTED, **ATLAS),
        Artifact("generalization_delay", "figure", "Section 4", "fit and generalization times as Kaplan-Meier "
                 "curves per SNR band", "Synthetic", when="boundary_fits",
                 function="benign.figures.atlas:generalization_delay", inputs=FITTED,
                 params={"bands": "synthetic.boundary_fits.survival_bands"}, **SWEEPS),
        Artifact("delay_scan", "table", "Section 4", "the benign band: does attention select after the flipped "
                 "labels are fitted?", "Tables", when="delay_scan", function="benign.tables.delay_scan:delay_scan",
                 inputs={"runs": "runs@token", "curves": "curves@token"}, params={"sweep": "@delay_scan"}),
        Artifact("max_margin", "table", "", "attention-SVM check: cosines with baselines, selections, margins, "
                 "local optimality, rate fits", "Tables", when="max_margin",
                 function="benign.tables.max_margin:max_margin", inputs={"frame": "alignment"},
                 params={"horizons": "max_margin.horizons"}),
        Artifact("max_margin_alignment", "figure", "", "attention-SVM check: cosine of the direction with p^mm over "
                 "training", "Synthetic", when="max_margin",
                 function="benign.figures.max_margin:max_margin_alignment", inputs={"frame": "alignment"}),
        Artifact("real_eta0.1", "table", "Table 2", "real data, eta = 0.1: train loss, test accuracy, baseline",
                 "Real data", when="real"),
        Artifact("real_eta0_0.2", "table", "Table 6", "real data, eta = 0 and 0.2, the paper's numbers beside",
                 "Real data", when="real"),
        Artifact("real_eta_heatmap", "figure", "Figure 8", "real data: train and test loss over data sets x eta",
                 "Real data", when="real", function="benign.figures.real:real_eta_heatmap",
                 inputs={"real_runs": "real_runs"}, params={"sweep": "real.eta_sweep"}),
        Artifact("real_attention_dynamics", "figure", "Figure 9", "real data: max attention from position 0 vs "
                 "epoch", "Real data", when="real", function="benign.figures.real:real_attention_dynamics",
                 inputs={"real_runs": "real_runs", "real_attention": "real_attention"},
                 params={"grid": "real.grid"}),
        Artifact("real_test_dynamics", "figure", "", "real data: test accuracy over phase 2, with the epoch the "
                 "noisy labels are memorised", "Real data", when="real",
                 function="benign.figures.real:real_test_dynamics",
                 inputs={"real_curves": "real_curves", "real_runs": "real_runs"}, params={"grid": "real.grid"}),
        Artifact("real_dynamics", "table", "", "real data: peak and final test accuracy, memorising epoch, the cost "
                 "of re-initialising query and key", "Tables", when="real",
                 function="benign.tables.real_dynamics:real_dynamics",
                 inputs={"real_runs": "real_runs", "real_curves": "real_curves"}, params={"grid": "real.grid"}),
    )
}  # fmt: skip


def generated() -> list[Artifact]:
    """The artifacts whose rules the workflow generates from this table."""
    return [a for a in ARTIFACTS.values() if a.function]


def config_value(cfg: dict, path: str, constants: dict):
    """The value a param names: a config key path (``synthetic.regime``), or a workflow constant
    (``@atlas_settings``)."""
    if path.startswith("@"):
        return constants[path[1:]]
    node = cfg
    for key in path.split("."):
        node = node[key]
    return node


def index() -> str:
    """The artifact index (README, docs/artifacts.md): what, the paper's number, the files."""
    from benign.synthetic import registry

    rows = ["| artifact | paper | file |", "| --- | --- | --- |"]
    for a in ARTIFACTS.values():
        ext = "{png,pdf}" if a.kind == "figure" else "{csv,md}"
        title = a.title.replace("|", "\\|")
        for model, paper in a.models.items() or [(None, a.paper)]:
            stem = (a.stems or (a.name,))[0].format(prefix=registry.MODELS[model].artifact_prefix if model else "")
            what = f"{title}, {registry.label(model)}" if model else title
            rows.append(f"| {what} | {paper or 'beyond the paper'} | `{a.folder}/{stem}.{ext}` |")
    return "\n".join(rows) + "\n"


BEGIN, END = "<!-- artifact index: python -m benign artifacts --write -->", "<!-- end of the artifact index -->"
INDEXED = ("README.md", "docs/artifacts.md")  # the files that hold the index between BEGIN and END


def with_index(text: str) -> str:
    """``text`` with the index between its markers replaced by :func:`index`."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{index()}{END}{tail}"
