"""What one entry of the artifact table is: a figure or table, the function that draws it, what it
reads (each input by its :class:`InputKind`), the config keys it depends on and when it is built.

An artifact is drawn by ``function(**inputs, **params, stem=...)``. With a :class:`View`, the
inputs the view reads go through it first, and the values it gives take their place. The entry
holds the function itself, so :func:`problems` checks each call against the imported signature,
and a view's return annotation (a ``TypedDict``) says what it gives.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from benign.core import paths, schema

ROOT = Path(__file__).resolve().parents[2]  # the repository: the captions, the File inputs


def table_file(stem: str, kind: str = "table") -> str:
    """The file of an artifact of ``stem`` (a table's CSV, a figure's PNG): what another
    artifact reads of it."""
    return paths.fill(paths.ARTIFACT, kind=kind, stem=stem, ext=".csv" if kind == "table" else ".png")


def parquet(table_schema):
    """The reader of an input kind whose files are Parquet tables of ``table_schema``."""
    return lambda files: schema.read_parquet(files, table_schema)


# Whose files an input of a per-model kind reads (:class:`Input`): every configured model, the model
# of synthetic.boundary_fits, the model of a per-model artifact; else a model named by its name.
ALL, FITS, MODEL = "all", "fits", "model"


@dataclass(frozen=True)
class InputKind:
    """One kind of input: how its files are read, and where they are (a path template of
    benign.core.paths, so Snakemake finds the job that writes them by the file, as it does for
    any rule's input).

    ``per_model``: the path has a ``{model}`` field, filled by the input's ``of``. ``per_sweep``:
    the path has ``{model}`` and ``{sweep}`` fields, filled with the fitted sweeps of
    synthetic.boundary_fits (an input that names FITS) or with one named sweep (a
    :class:`SweepOf`), so that an artifact waits for the jobs of the sweeps it reads alone.
    ``expand``: a wildcard of the path that the input spans, every configured value of it.
    ``model_only``: an input of this kind that names MODEL reads the file only where that
    model's atlas is fitted (else none)."""

    name: str
    read: Callable  # (path or paths) -> the value passed to the function
    path: str
    per_model: bool = False
    per_sweep: bool = False
    expand: str | None = None
    model_only: bool = False

    def __call__(self, of: str | None = None) -> Input:
        """An input of this kind (``of``: whose files, for a per-model kind)."""
        return Input(self, of)


@dataclass(frozen=True)
class Input:
    """An artifact's input: the files of one kind, of ``of``'s model(s) for a per-model kind."""

    kind: InputKind
    of: str | None = None


@dataclass(frozen=True)
class Key:
    """A param read from the config, at a path of keys (checked against the config schema)."""

    path: tuple[str, ...]

    def __init__(self, dotted: str):
        object.__setattr__(self, "path", tuple(dotted.split(".")))

    def __str__(self) -> str:
        return ".".join(self.path)


@dataclass(frozen=True)
class FromPlan:
    """A param computed from the plan (benign.plan.load.Plan: the config as read, its jobs) by
    ``function(plan)``, a function beside the entries of its half."""

    function: Callable


@dataclass(frozen=True)
class ModelName:
    """The param :data:`MODEL_NAME`: the model of a per-model artifact."""


MODEL_NAME = ModelName()


@dataclass(frozen=True)
class SweepOf:
    """Whose files an input of a per-sweep kind reads, where not the fitted sweeps (FITS): the
    sweep ``sweep`` of ``model``."""

    model: str
    sweep: str


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

    function: Callable  # its return annotation is a TypedDict: the keys it gives
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
    function: Callable  # called with exactly the inputs, the params and ``stem``
    # When it is built: always (None), or where a condition beside the entry holds, a function of
    # the plan (benign.plan.load.Plan) and, for a per-model artifact, of the model too
    when: Callable[..., bool] | None = None
    inputs: dict = field(default_factory=dict)  # {argument: Input or File}
    params: dict = field(default_factory=dict)  # {argument: Key, FromPlan, MODEL_NAME or Value}
    view: View | None = None
    # A per-model artifact: drawn for every configured model (that meets ``when``) as
    # prefix(model) + name, its params' MODEL_NAME the model's name; {model: its paper number} for
    # the index, which lists the models named here.
    models: dict = field(default_factory=dict)
    prefix: Callable[[str], str] | None = None  # a per-model artifact's file prefix of a model
    caption: str = ""  # workflow/report/<caption>.rst, where not <name>.rst
    home: str = ""  # the module of the half that holds the entry (set by :func:`entries`)
    kinds: str = ""  # the module of the half's input kinds, its KINDS (set by :func:`entries`)

    @property
    def extensions(self) -> tuple[str, str]:
        return (".png", ".pdf") if self.kind == "figure" else (".csv", ".md")

    @property
    def folder(self) -> str:
        return str(Path(table_file("", kind=self.kind)).parent)

    def stem(self, model: str | None = None) -> str:
        """The file stem: ``name``, after the model's prefix for a per-model artifact."""
        return self.prefix(model) + self.name if self.models else self.name

    @property
    def key(self) -> str:
        """Its key in the table, "<kind>/<name>": a table and a figure may share a name."""
        return f"{self.kind}/{self.name}"

    def rule(self, model: str | None = None) -> str:
        """The name of the rule that draws it: figure_<stem> or table_<stem>, "." as "_"."""
        return f"{self.kind}_{self.stem(model)}".replace(".", "_")

    def files(self, model: str | None = None) -> list[str]:
        return [f"{self.folder}/{self.stem(model)}{ext}" for ext in self.extensions]

    @property
    def modules(self) -> list[str]:
        """The modules of its function and its view."""
        return [f.__module__ for f in (self.function, self.view.function if self.view else None) if f]

    def recipe(self) -> dict:
        """What the render script needs of the entry, by name: its function, the kind of each
        input (None: a repository file), its view, and the module of the kinds. The render rule
        passes it as a param, so an edit to this entry reruns this artifact alone, and its
        fingerprint covers these modules, not the table that holds every entry."""
        view = self.view and {"function": _name(self.view.function), "reads": list(self.view.reads),
                              "gives": list(self.view.gives)}  # fmt: skip
        inputs = {name: spec.kind.name if isinstance(spec, Input) else None for name, spec in self.inputs.items()}
        return {"function": _name(self.function), "inputs": inputs, "view": view, "kinds": self.kinds}

    def arguments(self) -> set[str]:
        """The names its function is called with: the inputs (less those the view reads, plus
        what it gives), the params and ``stem``."""
        reads, gives = (set(self.view.reads), set(self.view.gives)) if self.view else (set(), set())
        return (set(self.inputs) - reads) | gives | set(self.params) | {"stem"}


def entries(home: str, kinds: str, *artifacts: Artifact) -> dict[str, Artifact]:
    """A half's table: {key: entry}, each entry knowing the module that holds it (``home``) and
    the module of its input kinds (``kinds``, which the render script loads)."""
    return {a.key: replace(a, home=home, kinds=kinds) for a in artifacts}


def param_value(plan, spec, model: str | None = None):
    """The value a param names for ``plan`` (benign.plan.load.Plan): a :class:`Key` of the
    config, a :class:`FromPlan`'s function of the plan, :data:`MODEL_NAME` (``model``) or a
    :class:`Value`."""
    if isinstance(spec, Value):
        return spec.value
    if isinstance(spec, FromPlan):
        return spec.function(plan=plan)
    if spec == MODEL_NAME:
        return model
    node = plan.config.raw
    for key in spec.path:
        node = node[key]
    return node


def view_gives(function: Callable) -> frozenset:
    """The keys a view returns: the fields of the ``TypedDict`` its return is annotated with."""
    returned = typing.get_type_hints(function).get("return")
    if not typing.is_typeddict(returned):
        raise LookupError(f"view {_name(function)}: its return must be annotated with a TypedDict")
    return frozenset(returned.__annotations__)


def _name(function: Callable) -> str:
    return f"{function.__module__}:{function.__qualname__}"


def _call_problems(what: str, function: Callable, given: set) -> list[str]:
    """An argument with no value, or a value that no argument takes, in ``function(**given)``."""
    params = inspect.signature(function).parameters.values()
    if any(p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL) for p in params):
        return [f"{what}: takes positional-only arguments"]
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    required = {p.name for p in params if p.name in names and p.default is p.empty}
    any_keyword = any(p.kind == p.VAR_KEYWORD for p in params)
    missing, unknown = required - given, set() if any_keyword else given - names
    return [f"{what}: no value for its argument(s) {sorted(missing)}"] * bool(missing) + [
        f"{what}: takes no argument(s) {sorted(unknown)}"
    ] * bool(unknown)


def _spec_problems(a: Artifact, name: str, spec, kinds: dict, root: Path) -> list[str]:
    if isinstance(spec, File):
        return [] if (root / spec.path).is_file() else [f"input {name}: no file {spec.path}"]
    if not isinstance(spec, Input):
        return [f"input {name}: {spec!r} is neither an Input nor a File"]
    kind = spec.kind
    if kinds.get(kind.name) is not kind:
        return [f"input {name}: unknown kind {kind.name!r} (the kinds: {sorted(kinds)})"]
    if kind.per_sweep and not (spec.of == FITS or isinstance(spec.of, SweepOf)):
        return [f"input {name}: {kind.name} is read per sweep: name FITS or a SweepOf, not {spec.of!r}"]
    if spec.of is not None and not (kind.per_model or kind.per_sweep or kind.model_only and spec.of == MODEL):
        return [f"input {name}: {kind.name} is not read per model (of {spec.of!r})"]
    if kind.per_model and spec.of is None:
        return [f"input {name}: {kind.name} is read per model: say whose (ALL, FITS, MODEL or a model)"]
    if spec.of == MODEL and not a.models:
        return [f"input {name}: {kind.name} of MODEL names the model of a per-model artifact"]
    return []


def in_schema(schema: dict, path: tuple[str, ...]) -> bool:
    """Whether the config schema (its ``$defs`` references followed) has the key ``path``."""
    node = schema
    for key in path:
        while "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        if key not in node.get("properties", {}):
            return False
        node = node["properties"][key]
    return True


def _param_problems(a: Artifact, params: dict, schema) -> list[str]:
    problems = []
    for name, spec in params.items():
        if isinstance(spec, Value):
            continue
        if not isinstance(spec, Key | FromPlan | ModelName):
            problems.append(f"param {name}: {spec!r} is neither a Key, a FromPlan, MODEL_NAME nor a Value")
        elif spec == MODEL_NAME and not a.models:
            problems.append(f"param {name}: MODEL_NAME names the model of a per-model artifact")
        elif isinstance(spec, FromPlan):
            problems += _call_problems(f"param {name}: {_name(spec.function)}", spec.function, {"plan"})
        elif isinstance(spec, Key) and schema is not None and not in_schema(schema, spec.path):
            problems.append(f"param {name}: the config schema has no key {spec}")
    return problems


def _view_problems(a: Artifact, schema) -> list[str]:
    view = a.view
    what = f"view {_name(view.function)}"
    problems = _param_problems(a, view.params, schema)
    if unread := set(view.reads) - set(a.inputs):
        problems.append(f"{what}: reads {sorted(unread)}, which are not inputs")
    problems += _call_problems(what, view.function, set(view.reads) | set(view.params))
    try:
        if extra := set(view.gives) - view_gives(view.function):
            problems.append(f"{what}: gives no {sorted(extra)}")
    except (LookupError, NameError) as err:
        problems.append(str(err))
    return problems


def artifact_problems(a: Artifact, kinds: dict, root: Path = ROOT, schema=None) -> list[str]:
    """What is wrong with one entry: its fields, its inputs' kinds (``kinds``: {name: InputKind}),
    and the call of its function (and view, condition and params computed from the plan) against
    their signatures; ``schema``: the config schema its keys must be in, if known."""
    problems = []
    if a.kind not in ("figure", "table"):
        problems.append(f"kind {a.kind!r} is neither figure nor table")
    if a.when is not None:
        problems += _call_problems(f"condition {_name(a.when)}", a.when, {"plan", "model"} if a.models else {"plan"})
    if a.models and a.prefix is None:
        problems.append("a per-model artifact with no prefix")
    if not (root / "workflow/report" / f"{a.caption or a.name}.rst").is_file():
        problems.append(f"no caption workflow/report/{a.caption or a.name}.rst")
    for name, spec in a.inputs.items():
        problems += _spec_problems(a, name, spec, kinds, root)
    problems += _param_problems(a, a.params, schema)
    if both := (set(a.inputs) | {"stem"}) & set(a.params) | {"stem"} & set(a.inputs):
        problems.append(f"{sorted(both)}: both an input and a param (or stem, which the workflow gives)")
    if a.view:
        problems += _view_problems(a, schema)
    return problems + _call_problems(f"function {_name(a.function)}", a.function, a.arguments())


def problems(artifacts, kinds: dict, root: Path = ROOT, schema=None) -> list[str]:
    """Every entry's problems (:func:`artifact_problems`), each after its name."""
    return [f"{a.name} ({a.kind}): {p}" for a in artifacts for p in artifact_problems(a, kinds, root, schema)]
