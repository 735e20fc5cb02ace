"""The one table of the workflow's artifacts: every figure and table, what it reads, the config
keys it depends on, when it is built, and the paper's number.

From this table the workflow generates the render rules (workflow/rules/render.smk),
``all_outputs()`` and the report's categories; ``python -m benign artifacts`` writes the artifact
index of the README and docs/artifacts.md; the tests take their lists from it. Adding a figure
is its plot function, one entry here and its caption (workflow/report/<name>.rst).

An artifact is drawn by ``function(**inputs, **params, stem=...)``, each input read by its kind
(:data:`INPUT_KINDS`). With a :class:`View` (the atlas's labelled runs, the runs of some sweeps,
the real runs of the main grid), the inputs the view reads go through it first, and the values it
gives take their place. The function gets exactly these arguments, none dropped or added:
:func:`problems` compares every entry with its function's and its view's signatures, read from
their modules' source. Torch-free and cheap: the workflow reads the table and checks it at parse
time.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from pathlib import Path

from benign.core import paths

ROOT = Path(__file__).resolve().parents[2]  # the repository: the functions' modules, the captions

# What an input names: a kind (how it is read), and for the synthetic kinds (runs, curves,
# attention) whose model: "@fits" the model of synthetic.boundary_fits, "@all" every configured
# model, "@<model>", or "@model", the model of a per-model artifact. "fits@model": the
# regime-boundaries table where that model's atlas is fitted, else none. An input with no file
# is passed as None; a File input is a file of the repository, passed as its path.
INPUT_KINDS = ("runs", "curves", "attention", "fits", "alignment", "points", "real_runs", "real_attention",
               "real_curves")  # fmt: skip
SYNTHETIC_KINDS = ("runs", "curves", "attention")
# When an artifact is built (the workflow's ``built``): always, or only if the config has ...
CONDITIONS = {
    "always": "always",
    "delayed": "synthetic.token.delayed",
    "heatmap": "a sweep named heatmap (per model)",
    "boundary_fits": "synthetic.boundary_fits",
    "delay_scan": "the token sweep delay_scan",
    "one_step": "the token sweep one_step",
    "max_margin": "max_margin",
    "real": "real.use",
}


@dataclass(frozen=True)
class Value:
    """A param passed as it is written here, not read from the config."""

    value: object


@dataclass(frozen=True)
class File:
    """An input that is a file of the repository, passed as its path."""

    path: str


@dataclass(frozen=True)
class View:
    """What some of an artifact's inputs go through before its function: ``function(**reads,
    **params)`` returns a dict, of which ``gives`` goes to the artifact's function in place of
    the inputs it read."""

    function: str  # "module:function"; its ``return`` is a dict literal
    reads: tuple  # the artifact's inputs it is called with
    gives: tuple  # the values of its dict that the artifact's function takes
    params: dict = field(default_factory=dict)  # as an artifact's params


@dataclass(frozen=True)
class Artifact:
    """One figure (PNG and PDF) or table (CSV and Markdown) under results/, or one per model."""

    name: str  # file stem under results/figures/ or results/tables/; its caption is workflow/report/<name>.rst
    kind: str  # "figure" or "table"
    paper: str  # the paper's number as the authors' code maps it, the result it tests, or ""
    title: str  # what it shows, in a line
    section: str  # the report's category
    when: str = "always"  # a key of CONDITIONS
    function: str = ""  # "module:function", called with exactly the inputs, the params and ``stem``
    inputs: dict = field(default_factory=dict)  # {argument: "<kind>[@<model>]" or File(path)}
    params: dict = field(default_factory=dict)  # {argument: a config key path, "@<workflow constant>" or Value(...)}
    view: View | None = None
    # A per-model artifact: drawn for every configured model (that meets ``when``) as
    # <prefix><name> (benign.synthetic.registry.MODELS' artifact_prefix), its params' "@model" the
    # model's name; {model: its paper number} for the index, which lists the models named here.
    models: dict = field(default_factory=dict)
    caption: str = ""  # workflow/report/<caption>.rst, where not <name>.rst

    @property
    def extensions(self) -> tuple[str, str]:
        return (".png", ".pdf") if self.kind == "figure" else (".csv", ".md")

    @property
    def folder(self) -> str:
        return str(Path(paths.fill(paths.ARTIFACT, kind=self.kind, stem="", ext="")))

    def stem(self, model: str | None = None) -> str:
        """The file stem: ``name``, after the model's artifact prefix for a per-model artifact."""
        if not self.models:
            return self.name
        from benign.synthetic import registry

        return registry.MODELS[model].artifact_prefix + self.name

    @property
    def key(self) -> str:
        """Its key in :data:`ARTIFACTS`, "<kind>/<name>": a table and a figure may share a name."""
        return f"{self.kind}/{self.name}"

    def rule(self, model: str | None = None) -> str:
        """The name of the rule that draws it: figure_<stem> or table_<stem>, "." as "_"."""
        return f"{self.kind}_{self.stem(model)}".replace(".", "_")

    def files(self, model: str | None = None) -> list[str]:
        return [f"{self.folder}/{self.stem(model)}{ext}" for ext in self.extensions]

    @property
    def modules(self) -> list[str]:
        """The modules of its function and its view (the rule's fingerprint names them)."""
        return [f.partition(":")[0] for f in (self.function, self.view.function if self.view else "") if f]

    def arguments(self) -> set[str]:
        """The names its function is called with: the inputs (less those the view reads, plus
        what it gives), the params and ``stem``."""
        reads, gives = (set(self.view.reads), set(self.view.gives)) if self.view else (set(), set())
        return (set(self.inputs) - reads) | gives | set(self.params) | {"stem"}


# the runs and curves of synthetic.boundary_fits' model, which the atlas's views read
FITTED = {"runs": "runs@fits", "curves": "curves@fits"}


def atlas(*gives: str) -> View:
    """The atlas's ok runs, each once, their labels at each horizon (and, as asked, the criteria
    and the runs' curves)."""
    return View("benign.analysis.theory:atlas_view", reads=("runs", "curves"), gives=gives,
                params={"settings": "@atlas_settings", "horizons": "synthetic.boundary_fits.horizons",
                        "regime": "synthetic.regime", "convergence": "@convergence"})  # fmt: skip


SWEEPS = View("benign.analysis.theory:sweeps_view", reads=("runs", "curves"), gives=("runs", "curves"),
              params={"settings": "@atlas_settings"})  # fmt: skip
# the atlas's fitted tables: their labels, at the claimed resolution
ATLAS_TABLE = dict(section="Tables", when="boundary_fits", inputs=FITTED,
                   params={"resolution_limit": "synthetic.boundary_fits.resolution"})  # fmt: skip
# Tables 2 and 6: the real runs of the main grid, the paper's numbers, the data sets' notes
REAL_TABLE = dict(section="Real data", when="real", caption="real_table", function="benign.tables.real:real_results",
                  inputs={"real_runs": "real_runs", "reference_csv": File("benign/tables/reference/table6.csv"),
                          "summary_csv": File("benign/tables/reference/table2_summary.csv")},
                  view=View("benign.tables.real:grid_view", reads=("real_runs",), gives=("real_runs",),
                            params={"grid": "real.grid"}))  # fmt: skip

ARTIFACTS = {
    a.key: a
    for a in (
        Artifact("token_projection", "figure", "Figure 1", "token projection under a hand-set query", "Synthetic",
                 function="benign.figures.projection:token_projection", inputs={"points": "points"},
                 params={"cfg": "synthetic.projection"}),
        Artifact("softmax_dynamics", "figure", "Figures 3, 6", "softmax dynamics", "Synthetic",
                 function="benign.figures.dynamics:softmax_dynamics",
                 inputs={"runs": "runs@model", "attention": "attention@model"}, params={"model": "@model"},
                 models={"token": "Figure 3", "encoder": "Figure 6", "token_p_w0": "", "token_p_identity": ""}),
        Artifact("loss_heatmap", "figure", "Figures 5, 7", "loss/accuracy heatmaps over (d, ||mu||), the config's grid",
                 "Synthetic", when="heatmap", function="benign.figures.heatmaps:loss_heatmap",
                 inputs={"runs": "runs@model", "fits": "fits@model"},
                 params={"model": "@model", "c1": "synthetic.boundaries.c1", "c2": "synthetic.boundaries.c2"},
                 models={"token": "Figure 5", "encoder": "Figure 7"}),
        Artifact("delayed_generalization", "figure", "Section 4", "delayed generalization of the benign setting",
                 "Synthetic", when="delayed", function="benign.figures.dynamics:delayed_generalization",
                 inputs={"runs": "runs@token", "curves": "curves@token"},
                 params={"loss_threshold": "synthetic.regime.loss_threshold"}),
        Artifact("synthetic_regimes", "table", "Figures 3, 6", "named settings of every model, final metrics and "
                 "regime", "Tables", function="benign.tables.synthetic:synthetic_regimes",
                 inputs={"runs": "runs@all", "curves": "curves@all"},
                 params={"criteria": "synthetic.regime", "horizons": "synthetic.regimes_table.horizons"}),
        Artifact("step_convergence", "table", "Theorem 4.1", "the step check: the atlas's crossings at the step "
                 "halved and the steps doubled, per boundary and d, with the verdict", "Tables", when="boundary_fits",
                 function="benign.tables.step_convergence:step_convergence", inputs=FITTED,
                 view=atlas("convergence")),
        Artifact("regime_boundaries", "table", "Theorem 4.1", "regime boundaries: one fit per boundary and horizon "
                 "over the atlas, beside the theory's exponents", function="benign.tables.boundaries:regime_boundaries",
                 view=atlas("runs", "labels", "criteria", "convergence"),
                 **{**ATLAS_TABLE, "params": {**ATLAS_TABLE["params"], "margin": "synthetic.boundary_fits.margin"}}),
        Artifact("regime_model", "table", "Theorem 4.1", "the fitted regime model that `python -m benign regime` "
                 "reads", function="benign.tables.boundaries:regime_model", view=atlas("runs", "labels", "convergence"),
                 **ATLAS_TABLE),
        Artifact("one_step_regime", "table", "beyond the paper", "the large-step regime: where one step at the "
                 "paper's fixed lr fits the flipped labels, per n and ||mu||", "Tables", when="one_step",
                 function="benign.tables.one_step:one_step_regime", inputs={"runs": "runs@token", "curves": "curves@token"},
                 params={"sweep": "@one_step", "criteria": "synthetic.regime"}),
        Artifact("gap_dynamics", "table", "Section 4", "the attention gap's clock g in the benign band: linear "
                 "growth, its rate against ||mu||, d and n, and the local slope of r", "Tables", when="boundary_fits",
                 function="benign.tables.gap_dynamics:gap_dynamics", inputs=FITTED,
                 view=atlas("runs", "labels", "curves")),
        Artifact("generalization_times", "table", "Section 4", "fit and generalization times as censored survival "
                 "times (log-normal AFT on SNR, 1/SNR^2 and log SNR, by where the runs head) and each run's signed delay", "Tables", when="boundary_fits",
                 function="benign.tables.generalization_times:generalization_times", inputs=FITTED, view=SWEEPS,
                 params={"bands": "synthetic.boundary_fits.survival_bands", "regime": "synthetic.regime"}),
        Artifact("regime_map", "figure", "Theorem 4.1", "the regime atlas per n and horizon, with the fitted and "
                 "the theory's boundaries", "Synthetic", when="boundary_fits",
                 function="benign.figures.atlas:regime_map", inputs={**FITTED, "fits": "fits"},
                 view=atlas("runs", "labels")),
        Artifact("step_convergence", "figure", "Theorem 4.1", "the step check: each boundary's crossing shift "
                 "per d when the step is halved, beside the crossings' own resolution", "Synthetic",
                 when="boundary_fits", function="benign.figures.atlas:step_convergence", inputs={**FITTED},
                 view=atlas("convergence"), caption="step_convergence_figure"),
        Artifact("one_step_regime", "figure", "beyond the paper", "the large-step regime: the share of flipped "
                 "labels one step at the paper's lr fits, over (d, ||mu||) per n", "Synthetic", when="one_step",
                 function="benign.figures.one_step:one_step_regime", inputs={"runs": "runs@token", "curves": "curves@token"},
                 params={"sweep": "@one_step", "criteria": "synthetic.regime"}, caption="one_step_regime_figure"),
        Artifact("boundary_scaling", "figure", "Theorem 4.1", "each fitted exponent against the horizon, beside the "
                 "theory's", "Synthetic", when="boundary_fits", function="benign.figures.atlas:boundary_scaling",
                 inputs={"fits": "fits"}),
        Artifact("gap_clock", "figure", "Section 4", "the attention gap's clock g and the test loss r against "
                 "the steps in the benign band, and the clock's rate against ||mu||", "Synthetic", when="boundary_fits",
                 function="benign.figures.atlas:gap_clock", inputs=FITTED, view=atlas("runs", "labels", "curves")),
        Artifact("generalization_delay", "figure", "Section 4", "fit and generalization times as Kaplan-Meier "
                 "curves per SNR band", "Synthetic", when="boundary_fits",
                 function="benign.figures.atlas:generalization_delay", inputs=FITTED, view=SWEEPS,
                 params={"bands": "synthetic.boundary_fits.survival_bands"}),
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
                 params={"etas": Value([0.1]), "notes": "@real_notes"}, **REAL_TABLE),
        Artifact("real_eta0_0.2", "table", "Table 6", "real data, eta = 0 and 0.2, the paper's numbers beside",
                 params={"etas": Value([0.0, 0.2]), "notes": "@real_notes"}, **REAL_TABLE),
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


def param_value(cfg: dict, spec, constants: dict):
    """The value a param names: a config key path (``synthetic.regime``), a workflow constant
    (``@atlas_settings``; ``@model``, a per-model artifact's model) or a :class:`Value`."""
    if isinstance(spec, Value):
        return spec.value
    if spec.startswith("@"):
        return constants[spec[1:]]
    node = cfg
    for key in spec.split("."):
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
            what = f"{title}, {registry.label(model)}" if model else title
            rows.append(f"| {what} | {paper or 'beyond the paper'} | `{a.folder}/{a.stem(model)}.{ext}` |")
    return "\n".join(rows) + "\n"


BEGIN, END = "<!-- artifact index: python -m benign artifacts --write -->", "<!-- end of the artifact index -->"
INDEXED = ("README.md", "docs/artifacts.md")  # the files that hold the index between BEGIN and END


def with_index(text: str) -> str:
    """``text`` with the index between its markers replaced by :func:`index`."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{index()}{END}{tail}"


# The table against its functions, read from their modules' source: no import, so no torch or
# matplotlib at the workflow's parse time.


@dataclass(frozen=True)
class Signature:
    """What a function can be called with by keyword."""

    names: frozenset  # every argument it names
    required: frozenset  # those without a default
    any_keyword: bool  # it takes **kwargs


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _definition(target: str, root: Path) -> ast.FunctionDef:
    """The ``def`` of "module:function" in the module's source, or in the module it is imported from."""
    module, _, name = target.partition(":")
    base = root.joinpath(*module.split("."))
    path = next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)
    if path is None:
        raise LookupError(f"no module {module} in {root}")
    for node in _tree(path).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _definition(f"{node.module}:{alias.name}", root)
    raise LookupError(f"{module} defines no function {name}")


def signature(target: str, root: Path = ROOT) -> Signature:
    """The keyword signature of "module:function", read from its source."""
    args = _definition(target, root).args
    if args.posonlyargs:
        raise LookupError(f"{target} takes positional-only arguments")
    positional = [a.arg for a in args.args]
    defaulted = positional[len(positional) - len(args.defaults) :]
    keyword = [a.arg for a in args.kwonlyargs]
    required = [a for a in positional if a not in defaulted]
    required += [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    return Signature(frozenset(positional + keyword), frozenset(required), args.kwarg is not None)


def view_gives(target: str, root: Path = ROOT) -> frozenset:
    """The keys of the dict a view returns: on every ``return`` of its body, a dict literal with
    string keys (a view that returns anything else cannot be checked, and is refused)."""
    returns, stack = [], list(_definition(target, root).body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            returns.append(node.value)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    keys = []
    for value in returns:
        if not isinstance(value, ast.Dict) or not all(
            isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys
        ):
            raise LookupError(f"{target}: every return must be a dict literal with string keys")
        keys.append({k.value for k in value.keys})
    if not keys:
        raise LookupError(f"{target} has no return")
    return frozenset(set.intersection(*keys))


def _call_problems(what: str, sig: Signature, given: set) -> list[str]:
    missing, unknown = sig.required - given, set() if sig.any_keyword else given - sig.names
    return [f"{what}: no value for its argument(s) {sorted(missing)}"] * bool(missing) + [
        f"{what}: takes no argument(s) {sorted(unknown)}"
    ] * bool(unknown)


def _spec_problems(a: Artifact, name: str, spec, root: Path) -> list[str]:
    if isinstance(spec, File):
        return [] if (root / spec.path).is_file() else [f"input {name}: no file {spec.path}"]
    kind, at, model = spec.partition("@")
    if kind not in INPUT_KINDS:
        return [f"input {name}: unknown kind {kind!r} (benign.config.artifacts.INPUT_KINDS)"]
    if at and kind not in (*SYNTHETIC_KINDS, "fits") or kind == "fits" and at and model != "model":
        return [f"input {name}: {kind} is not read per model ({spec!r})"]
    if model == "model" and not a.models:
        return [f"input {name}: {spec!r} names the model of a per-model artifact"]
    return []


def _param_problems(a: Artifact, params: dict, constants) -> list[str]:
    problems = []
    for name, spec in params.items():
        if isinstance(spec, Value):
            continue
        if not isinstance(spec, str) or not spec:
            problems.append(f"param {name}: {spec!r} is neither a config key path, '@constant' nor a Value")
        elif spec == "@model" and not a.models:
            problems.append(f"param {name}: '@model' names the model of a per-model artifact")
        elif spec.startswith("@") and spec != "@model" and constants is not None and spec[1:] not in constants:
            problems.append(f"param {name}: the workflow has no constant {spec[1:]!r}")
    return problems


def artifact_problems(a: Artifact, constants=None, root: Path = ROOT) -> list[str]:
    """What is wrong with one entry: its fields, and the call of its function (and view) against
    their signatures: an argument with no value, or a value that no argument takes.
    ``constants``: the names of the workflow's constants, if known."""
    problems = []
    if a.kind not in ("figure", "table"):
        problems.append(f"kind {a.kind!r} is neither figure nor table")
    if a.when not in CONDITIONS:
        problems.append(f"when {a.when!r} is not a condition (benign.config.artifacts.CONDITIONS)")
    if not (root / "workflow/report" / f"{a.caption or a.name}.rst").is_file():
        problems.append(f"no caption workflow/report/{a.caption or a.name}.rst")
    for name, spec in a.inputs.items():
        problems += _spec_problems(a, name, spec, root)
    problems += _param_problems(a, a.params, constants)
    if both := (set(a.inputs) | {"stem"}) & set(a.params) | {"stem"} & set(a.inputs):
        problems.append(f"{sorted(both)}: both an input and a param (or stem, which the workflow gives)")
    try:
        if a.view:
            view = a.view
            problems += _param_problems(a, view.params, constants)
            if unread := set(view.reads) - set(a.inputs):
                problems.append(f"view {view.function}: reads {sorted(unread)}, which are not inputs")
            problems += _call_problems(f"view {view.function}", signature(view.function, root),
                                       set(view.reads) | set(view.params))  # fmt: skip
            if extra := set(view.gives) - view_gives(view.function, root):
                problems.append(f"view {view.function}: gives no {sorted(extra)}")
        if not a.function:
            problems.append("no function")
        else:
            problems += _call_problems(f"function {a.function}", signature(a.function, root), a.arguments())
    except (LookupError, OSError, SyntaxError) as err:
        problems.append(str(err))
    return problems


def problems(artifacts=None, constants=None, root: Path = ROOT) -> list[str]:
    """Every entry's problems (:func:`artifact_problems`), each after its name."""
    return [
        f"{a.name} ({a.kind}): {p}"
        for a in (ARTIFACTS.values() if artifacts is None else artifacts)
        for p in artifact_problems(a, constants, root)
    ]


def check(constants=None) -> None:
    """Raise ValueError naming every problem of the table (the workflow calls this at parse time)."""
    if found := problems(constants=constants):
        raise ValueError("benign/config/artifacts.py does not match its functions:\n" + "\n".join(found))
