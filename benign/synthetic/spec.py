"""The one list of a synthetic run's parameters (docs/data.md, docs/model.md), with what each one is.

Every other list derives from these fields: the trainer's and the planner's batch key, the
fields a run id leaves out, the CLI's flags, the run parameters of the runs schema, the keys of
``synthetic.defaults`` and the checks of a run's values. Adding a sweepable parameter is one
field here (and, for a new noise or data parameter, its use in the data model). Torch-free: the
workflow plans with it at parse time.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass, field

from benign.core import notation
from benign.synthetic import engines, flow, registry
from benign.synthetic.engines import ENGINES, gram_min_d

ENGINE_HELP = (
    "how the token model is drawn: explicit (d-dimensional, the paper's uniform W0), gram (Gram "
    "matrices sampled exactly in law, Gaussian W0 of the same variance, cost free of d, needs "
    "d >= 2(nT + 2)) or auto (gram where d allows)"
)
STEP_SIZE_HELP = (
    "the step in the units that make it free of d, lr sigma^2 d (docs/regimes.md#step-size); given, it sets lr = "
    "step_size / (sigma^2 d); unset, lr is used as given"
)
INTEGRATOR_HELP = (
    "how the token models train: gd (gradient descent at the run's lr) or flow (the gradient flow of that lr, "
    "integrated with an adaptive step to the time step_size x steps; docs/model.md#gradient-flow-with-an-adaptive-step)"
)
FLOW_TOL_HELP = (
    f"the flow's tolerance: the largest change of any training logit in one of its steps (integrator flow only; "
    f"unset: {flow.TOL:g})"
)
W_DTYPE_HELP = (
    "the precision of W's trained correction W - W0 (the N x N matrix A of the reduced program, "
    "docs/model.md#precision): float64, or float32 where reading it bounds a CPU step (the atlas's long flow "
    "runs); every other quantity stays float64. Models that train W, with the flow, only"
)
W_DTYPES = ("float64", "float32")
# the named settings every model trains, one per regime of the theory (config synthetic.<model>.settings)
NAMED_SETTINGS = ("benign", "harmful", "not_overfitting")
GRID, RATES = "#/$defs/grid", "#/$defs/rates"  # a sweep axis's values (workflow/schemas/config.schema.yaml)
POSNUM, POSINT = {"$ref": "#/$defs/posnum"}, {"$ref": "#/$defs/posint"}
EVEN = {"type": "integer", "minimum": 2, "multipleOf": 2}


def param(default, help: str, schema: dict, *, batch: bool = False, sweep: bool = False, axis: str = GRID,
          defaults: bool = False, numbers: bool = True, column: bool = True, model_key: bool = False,
          fixed: bool = False, symbol: tuple[str, str] | None = None):  # fmt: skip
    """A field of the spec and what it is: ``help`` and ``schema`` (its JSON schema in the config),

    - ``batch``: runs that share every batch field share their data draw and train as one
      tensor program (benign.synthetic.trainer);
    - ``sweep``: a named sweep may take it as an axis, whose values ``axis`` checks;
    - ``fixed``: a named sweep may set it among its fixed values (an axis or a default may too);
    - ``defaults``: ``synthetic.defaults`` sets it for every model;
    - ``numbers``: it changes the numbers (else the run id leaves it out);
    - ``column``: a column of the runs table (benign.synthetic.schema.RUNS);
    - ``model_key``: some model's own run key (benign.synthetic.registry.Model.run_keys), None for
      the others;
    - ``symbol``: how tables and figures name it, (text, matplotlib mathtext); the name itself if None.
    """
    meta = dict(help=help, schema=schema, batch=batch, sweep=sweep, axis=axis, defaults=defaults, numbers=numbers,
                column=column, model_key=model_key, fixed=fixed, symbol=symbol or (None, None))  # fmt: skip
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class DataSpec:
    """One data set of the synthetic model (paper defaults)."""

    n: int = param(20, "training samples (even: classes are balanced)", EVEN, batch=True, sweep=True, defaults=True)
    T: int = param(8, "tokens per input", {"type": "integer", "minimum": 3}, batch=True, sweep=True, defaults=True)
    d: int = param(2000, "token dimension", {"type": "integer", "minimum": 2}, batch=True, sweep=True)
    rho: float = param(0.1, "weak-signal scale", POSNUM, sweep=True, defaults=True, symbol=notation.SYMBOLS["rho"])
    signal_norm: float = param(20.0, "||mu||", POSNUM, sweep=True, symbol=notation.SYMBOLS["signal_norm"])
    eta: float = param(0.2, "label-noise rate, in [0, 1)", {"$ref": "#/$defs/eta"}, sweep=True, axis=RATES, symbol=notation.SYMBOLS["eta"],
                       defaults=True)  # fmt: skip
    sigma: float = param(1.0, "noise std", POSNUM, batch=True, defaults=True, symbol=notation.SYMBOLS["sigma"])
    n_test: int = param(1000, "clean test samples (even: classes are balanced)", EVEN, batch=True, defaults=True,
                        symbol=notation.SYMBOLS["n_test"])  # fmt: skip
    seed: int = param(42, "seed of the data draw and the initialisation", {"type": "integer"}, batch=True)

    @property
    def snr(self) -> float:
        return snr(self.signal_norm, self.sigma, self.d)


@dataclass(frozen=True)
class RunSpec(DataSpec):
    """Every parameter of one synthetic run (paper defaults): its data set and its model and
    training. Values are checked where they come from (the config's validation, the CLI's);
    here only that they fit the model."""

    model: str = param("token", "a model of benign.synthetic.registry", {"type": "string"}, batch=True)
    engine: str = param("explicit", ENGINE_HELP, {"enum": list(ENGINES)}, batch=True, fixed=True)
    lr: float = param(5e-3, "gradient-descent learning rate", POSNUM, sweep=True, defaults=True)
    step_size: float | None = param(None, STEP_SIZE_HELP, POSNUM, fixed=True)
    steps: int = param(1000, "full-batch gradient steps (the flow: its horizon, in steps of lr)", POSINT, batch=True,
                       defaults=True)  # fmt: skip
    integrator: str = param("gd", INTEGRATOR_HELP, {"enum": list(flow.INTEGRATORS)}, batch=True, fixed=True)
    flow_tol: float | None = param(None, FLOW_TOL_HELP, POSNUM, batch=True, fixed=True)
    w_dtype: str = param("float64", W_DTYPE_HELP, {"enum": list(W_DTYPES)}, batch=True, fixed=True)
    mlp_dim: int | None = param(None, "encoder MLP width (the encoder's run key)", POSINT, batch=True, symbol=("MLP width",) * 2,
                                model_key=True)  # fmt: skip
    setting: str = param("single", "the named setting or sweep that trains the run", {"type": "string"},
                         numbers=False)  # fmt: skip
    sweeps: tuple = param((), "every named setting or sweep that reads the run (sweeps share a run), the one "
                          "that trains it first", {"type": "array", "items": {"type": "string"}},
                          numbers=False)  # fmt: skip
    log_every: int = param(0, "log every that many steps (0: the first and last only)", {"type": "integer", "minimum": 0},
                           numbers=False, column=False)  # fmt: skip
    log_points: int = param(0, "> 0: that many log-spaced steps instead", {"type": "integer", "minimum": 0},
                            numbers=False, column=False)  # fmt: skip
    record_attention: bool = param(False, "record every training sample's attention", {"type": "boolean"},
                                   numbers=False, column=False)  # fmt: skip

    def __post_init__(self) -> None:
        object.__setattr__(self, "sweeps", tuple(self.sweeps) or (self.setting,))  # a list from JSON params
        if self.step_size is not None:  # frozen: the lr it sets is what the run records
            object.__setattr__(self, "lr", lr_for(self.step_size, self.sigma, self.d))
        if self.integrator == "flow" and self.flow_tol is None:  # frozen: the tolerance it ran at is recorded
            object.__setattr__(self, "flow_tol", flow.TOL)
        if self.engine == "auto":  # frozen: the resolved engine is what the run records
            object.__setattr__(self, "engine", resolve_engine(dataclasses.asdict(self)))
        if problem := model_problem(dataclasses.asdict(self)):
            key, allowed = problem
            raise ValueError(f"{key} = {getattr(self, key)!r}: {allowed}")

    def model_keys(self) -> dict:
        """This run's values of its model's own run keys (benign.synthetic.registry.Model.run_keys)."""
        return {key: getattr(self, key) for key in registry.model(self.model).run_keys}

    @property
    def run_id(self) -> str:
        """A stable id from every parameter that changes the numbers (the paper's engine, explicit,
        is left out, so that the ids of runs from before the engine existed stay the same; so is
        the integrator at gradient descent)."""
        key = {k: v for k, v in dataclasses.asdict(self).items() if k in NUMBERS}
        if key["engine"] == "explicit":
            del key["engine"]
        if key["step_size"] is None:  # likewise: runs given by lr keep their ids
            del key["step_size"]
        if key["integrator"] == "gd":  # likewise, and its tolerance is unset
            del key["integrator"], key["flow_tol"]
        if key["w_dtype"] == "float64":  # likewise: runs from before the choice keep their ids
            del key["w_dtype"]
        digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:10]
        engine = "" if self.engine == "explicit" else f"-{self.engine}"
        integrator = "" if self.integrator == "gd" else f"-{self.integrator}"
        return f"{self.model}{engine}{integrator}-d{self.d}-m{self.signal_norm:g}-s{self.seed}-{digest}"

    def batch_key(self) -> tuple:
        return batch_key(dataclasses.asdict(self))

    @property
    def normalised_step(self) -> float:
        """lr sigma^2 d, whether the run was given its step size or its lr."""
        return self.lr * self.sigma**2 * self.d


def model_problem(run: dict) -> tuple[str, str] | None:
    """Whether a run (a dict of its parameters) fits its model, the one place this is decided: the
    first (key, what is allowed) that does not, or None. An unknown model; an engine or an
    integrator the model has not; the Gram engine below its least d; a flow tolerance without the
    flow; W's precision on a model that does not train W; a run key the model needs unset, or one
    of another model set."""
    model = registry.MODELS.get(run["model"])
    if model is None:
        return "model", f"unknown model; known: {', '.join(registry.MODELS)}"
    engine = run.get("engine") or "explicit"
    if engine != "auto" and engine not in model.engines:
        return (
            "engine",
            f"engine {engine!r} does not apply to model {run['model']!r} (its engines: {', '.join(model.engines)})",
        )
    integrator = run.get("integrator") or "gd"
    if integrator not in model.integrators:
        return (
            "integrator",
            f"integrator {integrator!r} does not apply to model {run['model']!r} (its integrators: "
            f"{', '.join(model.integrators)})",
        )
    if integrator != "flow" and run.get("flow_tol") is not None:
        return "flow_tol", "applies to integrator 'flow' only; leave it unset"
    if run.get("w_dtype", "float64") != "float64" and model.options.get("W") != "trained":
        return "w_dtype", f"applies to a model that trains W; model {run['model']!r} does not: leave it float64"
    if run.get("w_dtype", "float64") != "float64" and integrator != "flow":
        return "w_dtype", "float32 is checked with the flow only (integrator 'flow'); leave it float64"
    if engine == "gram" and run["d"] < gram_min_d(run["n"], run["T"]):
        return "d", f"the Gram engine (engine 'gram') needs d >= 2(nT + 2) = {gram_min_d(run['n'], run['T'])}"
    for key in MODEL_KEYS:
        if key in model.run_keys and run.get(key) is None:
            return key, f"model {run['model']!r} needs it"
        if key not in model.run_keys and run.get(key) is not None:
            return key, f"does not apply to model {run['model']!r}; leave it unset"
    return None


def resolve_engine(run: dict) -> str:
    """A run's engine with ``auto`` decided: gram where its model has it and d allows, explicit
    otherwise."""
    model_engines = registry.model(run["model"]).engines
    return engines.resolve(run.get("engine"), model_engines, run["n"], run["T"], run["d"])


def lr_for(step_size: float, sigma: float, d: int) -> float:
    """The learning rate of a normalised step: lr = step_size / (sigma^2 d). One step of gradient
    descent moves a token's attention logit by about lr ||x||^2 / 3 times its gradient
    (docs/regimes.md#step-size), and ||x||^2 is about sigma^2 d, so at a fixed step_size the
    step in the logits does not grow with d."""
    return step_size / (sigma**2 * d)


def snr(signal_norm: float, sigma: float, d: int) -> float:
    """SNR = ||mu|| / (sigma sqrt(d))."""
    return signal_norm / (sigma * math.sqrt(d))


FIELDS = dataclasses.fields(RunSpec)
FIELDS_BY_NAME = {f.name: f for f in FIELDS}


def _names(flag: str) -> tuple[str, ...]:
    return tuple(f.name for f in FIELDS if f.metadata[flag])


BATCH_KEYS = _names("batch")  # what the runs of one batch share
SWEEP_AXES = _names("sweep")  # what a named sweep may vary
DEFAULT_KEYS = _names("defaults")  # synthetic.defaults
NUMBERS = _names("numbers")  # what a run id is made of
COLUMNS = _names("column")  # the run parameters of the runs table
MODEL_KEYS = _names("model_key")  # some model's own run keys
LOGGING = tuple(f.name for f in FIELDS if not f.metadata["numbers"])  # what changes no number
INTEGERS = tuple(f.name for f in FIELDS if f.type in ("int", "int | None"))
REALS = tuple(f.name for f in FIELDS if f.type == "float")
OPTIONAL_REALS = tuple(f.name for f in FIELDS if f.type == "float | None")
NUMERIC = tuple(c for c in COLUMNS if c in INTEGERS + REALS and c != "seed")  # what a figure's note states
# how tables (text) and figures (mathtext) name each parameter: its ``symbol``, else its name
SYMBOLS = {f.name: f.metadata["symbol"][0] or f.name for f in FIELDS}
TEX = {f.name: f.metadata["symbol"][1] or f.name for f in FIELDS}


def fixed_text(runs) -> str:
    """The run parameters (:data:`COLUMNS`) that take one value over ``runs`` (a runs table), as
    text ('T 8; rho 0.1; ...'): what an atlas's tables and figures state, so that an atlas of
    other fixed parameters (T = 16, another step size or integrator) does not read as the default's."""
    parts = []
    for key in COLUMNS:
        if key not in runs or key in ("setting", "sweeps", "model"):
            continue
        values = runs[key].dropna().unique().tolist()
        if len(values) == 1:
            v = values[0]
            parts.append(f"{key} {v:g}" if isinstance(v, float) else f"{key} {v}")
    return "; ".join(parts) or "none"


def batch_key(run: dict) -> tuple:
    """What the runs of one batch share, from a run's dict (plain types: the planner's runs)."""
    return tuple(run.get(k) for k in BATCH_KEYS)


def n_flips(n: int, eta: float) -> int:
    """Labels the synthetic protocol flips: 2 * floor(ceil(eta n) / 2) (docs/data.md#label-noise)."""
    return 2 * (math.ceil(eta * n - 1e-9) // 2)
