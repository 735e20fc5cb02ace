"""Bad configuration is refused before any job runs, with a message naming the key, the value
and what is allowed, and without creating results/.

Each case is what a user would write: a config file given after config/smoke.yaml that sets
only the bad key (Snakemake merges it over the smoke config). A key that is missing cannot
be expressed that way (the merge keeps the key of config/config.yaml), so those cases remove
the key from the merged smoke config.

Every case goes through the loader the workflow calls at parse time (benign.plan.load), in
process. A few representative cases also run Snakemake itself, as a dry run and as a real run,
to show that the workflow refuses before any job, says "invalid configuration" and prints no
traceback.
"""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml
from snakemake.utils import update_config

from benign.plan import ConfigError
from benign.plan.load import load
from benign.real import registry
from tests.helpers.workflow_utils import copy_repo, snakemake

# (id, the user's extra config file, substrings the error must contain)
BAD = [
    (  # the site's memory ceiling below what the smallest run needs: refused before any job
        "ceiling-below-one-run",
        "cluster: {max_mem_mb: 550}",
        ["one run (model", "needs 6", "above the ceiling", "550 MB", "raise the ceiling"],
    ),
    (
        "max-margin-horizon-past-steps",
        "max_margin: {horizons: [100, 900]}",
        ["max_margin.horizons", "[100, 900]", "past its 300 steps"],
    ),
    (
        "d-string",
        "synthetic: {token: {settings: {benign: {d: forty}}}}",
        ["synthetic.token.settings.benign.d", "'forty'", "must be an integer"],
    ),
    ("n-float", "synthetic: {defaults: {n: 10.5}}", ["synthetic.defaults.n", "10.5", "must be an integer"]),
    ("n-integral-float", "synthetic: {defaults: {n: 10.0}}", ["synthetic.defaults.n", "10.0", "must be an integer"]),
    ("n-bool", "synthetic: {defaults: {n: true}}", ["synthetic.defaults.n", "True", "must be an integer"]),
    ("lr-list", "synthetic: {defaults: {lr: [0.05]}}", ["synthetic.defaults.lr", "[0.05]", "must be a number"]),
    ("eta-one", "synthetic: {defaults: {eta: 1.0}}", ["synthetic.defaults.eta", "1.0", "must be < 1", "[0, 1)"]),
    ("eta-negative", "synthetic: {defaults: {eta: -0.1}}", ["synthetic.defaults.eta", "-0.1", "must be >= 0"]),
    ("projection-eta-one", "synthetic: {projection: {eta: 1}}", ["synthetic.projection.eta", "= 1:", "must be < 1"]),
    ("T-2", "synthetic: {defaults: {T: 2}}", ["synthetic.defaults.T", "= 2:", "must be >= 3"]),
    (
        "d-1",
        "synthetic: {encoder: {settings: {harmful: {d: 1}}}}",
        ["synthetic.encoder.settings.harmful.d", "= 1:", "must be >= 2"],
    ),
    (
        "signal-norm-zero",
        "synthetic: {token: {settings: {benign: {signal_norm: 0}}}}",
        ["synthetic.token.settings.benign.signal_norm", "= 0:", "must be > 0"],
    ),
    ("rho-negative", "synthetic: {defaults: {rho: -0.1}}", ["synthetic.defaults.rho", "-0.1", "must be > 0"]),
    ("lr-zero", "synthetic: {defaults: {lr: 0}}", ["synthetic.defaults.lr", "= 0:", "must be > 0"]),
    ("steps-zero", "synthetic: {defaults: {steps: 0}}", ["synthetic.defaults.steps", "= 0:", "must be >= 1"]),
    (
        "delayed-steps-negative",
        "synthetic: {token: {delayed: {steps: -5}}}",
        ["synthetic.token.delayed.steps", "-5", "must be >= 1"],
    ),
    ("lr-nan", "synthetic: {defaults: {lr: .nan}}", ["synthetic.defaults.lr", "nan", "must be a finite number"]),
    (
        "projection-signal-norm-inf",
        "synthetic: {projection: {signal_norm: .inf}}",
        ["synthetic.projection.signal_norm", "inf", "must be a finite number"],
    ),
    (
        "grid-empty",
        "synthetic: {token: {sweeps: {heatmap: {axes: {signal_norm: []}}}}}",
        ["synthetic.token.sweeps.heatmap.axes.signal_norm", "[]", "must not be empty"],
    ),
    (
        "grid-duplicates",
        "synthetic: {encoder: {sweeps: {heatmap: {axes: {d: [8, 16, 8]}}}}}",
        ["synthetic.encoder.sweeps.heatmap.axes.d", "[8, 16, 8]", "repeated: [8]"],
    ),
    (
        "grid-stop-below-start",
        "synthetic: {token: {sweeps: {heatmap: {axes: {d: {start: 60, stop: 20, step: 20}}}}}}",
        ["synthetic.token.sweeps.heatmap.axes.d", "stop (20) is below start (60)"],
    ),
    (
        "grid-step-zero",
        "synthetic: {token: {sweeps: {heatmap: {axes: {d: {start: 20, stop: 60, step: 0}}}}}}",
        ["synthetic.token.sweeps.heatmap.axes.d.step", "= 0:", "must be > 0"],
    ),
    (
        "grid-step-negative",
        "synthetic: {token: {sweeps: {heatmap: {axes: {d: {start: 20, stop: 60, step: -20}}}}}}",
        ["synthetic.token.sweeps.heatmap.axes.d.step", "-20", "must be > 0"],
    ),
    (
        "grid-not-a-grid",
        "synthetic: {token: {sweeps: {heatmap: {axes: {d: 40}}}}}",
        [
            "synthetic.token.sweeps.heatmap.axes.d",
            "= 40:",
            "a list of values or an inclusive {start, stop, step} range",
        ],
    ),
    (
        "grid-d-fractional",
        "synthetic: {encoder: {sweeps: {heatmap: {axes: {d: [8, 12.5]}}}}}",
        ["d = 12.5", "must be an integer"],
    ),
    (
        "unknown-model-key",
        "synthetic: {token: {learning_rate: 0.1}}",
        ["synthetic.token.learning_rate", "0.1", "unknown key", "seeds"],
    ),
    (
        "unknown-defaults-key",
        "synthetic: {defaults: {etta: 0.3}}",
        ["synthetic.defaults.etta", "0.3", "unknown key", "eta"],
    ),
    (
        "unknown-top-level-key",
        "synthetics: {defaults: {eta: 0.3}}",
        ["config key synthetics", "unknown key", "synthetic"],
    ),
    ("synthetic-not-a-mapping", "synthetic: 5", ["config key synthetic = 5", "must be a mapping"]),
    (
        "duplicate-seeds",
        "synthetic: {token: {seeds: [1, 2, 1]}}",
        ["synthetic.token.seeds", "[1, 2, 1]", "repeated: [1]"],
    ),
    (
        "duplicate-heatmap-seeds",
        "synthetic: {encoder: {sweeps: {heatmap: {seeds: [3, 3]}}}}",
        ["synthetic.encoder.sweeps.heatmap.seeds", "[3, 3]", "repeated: [3]"],
    ),
    (
        "seed-fractional",
        "synthetic: {encoder: {seeds: [1, 1.5]}}",
        ["synthetic.encoder.seeds[1]", "1.5", "must be an integer"],
    ),
    (
        "seed-string",
        "synthetic: {token: {sweeps: {heatmap: {seeds: [a]}}}}",
        ["synthetic.token.sweeps.heatmap.seeds[0]", "'a'", "must be an integer"],
    ),
    (
        "seeds-empty",
        "synthetic: {token: {delayed: {seeds: []}}}",
        ["synthetic.token.delayed.seeds", "[]", "must not be empty"],
    ),
    ("n-odd", "synthetic: {defaults: {n: 11}}", ["synthetic.defaults.n", "= 11:", "must be even"]),
    ("n-test-odd", "synthetic: {defaults: {n_test: 51}}", ["synthetic.defaults.n_test", "= 51:", "must be even"]),
    ("projection-n-odd", "synthetic: {projection: {n: 21}}", ["synthetic.projection.n", "= 21:", "must be even"]),
    # a model's run key takes its bounds from the run spec and keeps its own description
    (
        "mlp-dim-zero",
        "synthetic: {encoder: {mlp_dim: 0}}",
        ["synthetic.encoder.mlp_dim", "= 0:", "must be >= 1", "(encoder MLP width"],
    ),  # fmt: skip
    (
        "mlp-dim-on-token-model",
        "synthetic: {token: {mlp_dim: 16}}",
        ["synthetic.token.mlp_dim", "= 16:", "unknown key", "a run key of synthetic.encoder"],
    ),
    (
        "log-points-one",
        "synthetic: {token: {delayed: {log_points: 1}}}",
        ["synthetic.token.delayed.log_points", "= 1:", "must be >= 2"],
    ),
    ("log-every-zero", "synthetic: {encoder: {log_every: 0}}", ["synthetic.encoder.log_every", "= 0:", "must be >= 1"]),
    (
        "head-acc-threshold-above-one",
        "synthetic: {regime: {head_acc_threshold: 1.5}}",
        ["synthetic.regime.head_acc_threshold", "1.5", "must be <= 1"],
    ),
    (
        "loss-threshold-one",
        "synthetic: {regime: {loss_threshold: 1}}",
        ["synthetic.regime.loss_threshold", "= 1:", "must be < 1"],
    ),
    (
        "regime-old-key",
        "synthetic: {regime: {test_threshold: 0.9}}",
        ["synthetic.regime.test_threshold", "unknown key"],
    ),
    (
        "boundary-constant-negative",
        "synthetic: {boundaries: {c1: -1}}",
        ["synthetic.boundaries.c1", "-1", "must be > 0"],
    ),
    (
        "lambda-zero",
        "synthetic: {projection: {lambdas: {benign: 0}}}",
        ["synthetic.projection.lambdas.benign", "= 0:", "must be > 0"],
    ),
    (
        "checkpoint-every-negative",
        "synthetic: {checkpoint_every: -1}",
        ["synthetic.checkpoint_every", "-1", "must be >= 0"],
    ),
    # named sweeps
    (
        "sweep-unknown-axis",
        "synthetic: {token: {sweeps: {atlas: {axes: {width: [1, 2]}, seeds: [1]}}}}",
        ["synthetic.token.sweeps.atlas.axes.width", "unknown key", "n, T, d, rho, signal_norm, eta, lr"],
    ),
    (
        "sweep-empty-range",
        "synthetic: {token: {sweeps: {atlas: {axes: {n: []}, seeds: [1]}}}}",
        ["synthetic.token.sweeps.atlas.axes.n", "[]", "must not be empty"],
    ),
    (
        "sweep-duplicate-values",
        "synthetic: {token: {sweeps: {atlas: {axes: {signal_norm: [5, 5]}, seeds: [1]}}}}",
        ["synthetic.token.sweeps.atlas.axes.signal_norm", "repeated: [5]"],
    ),
    (
        "sweep-logging-past-horizon",
        "synthetic: {token: {sweeps: {atlas: {axes: {d: [20]}, seeds: [1], steps: 10, log_points: 20}}}}",
        ["synthetic.token.sweeps.atlas.log_points", "= 20:", "horizon of 10 steps"],
    ),
    (
        "sweep-exclude-not-an-axis",
        "synthetic: {token: {sweeps: {atlas: {exclude: [{T: 4}]}}}}",
        ["synthetic.token.sweeps.atlas.exclude[0].T", "= 4:", "not an axis of this sweep"],
    ),
    (
        "sweep-exclude-not-on-the-axis",
        "synthetic: {token: {sweeps: {atlas: {exclude: [{d: 30, n: 6}]}}}}",
        ["synthetic.token.sweeps.atlas.exclude[0].d", "= 30:", "not a value of the axis", "[20, 40]"],
    ),
    (
        "sweep-fixed-is-an-axis",
        "synthetic: {token: {sweeps: {atlas: {axes: {d: [20]}, fixed: {d: 30}, seeds: [1]}}}}",
        ["synthetic.token.sweeps.atlas.fixed.d", "= 30:", "is an axis of this sweep"],
    ),
    (
        "sweep-heatmap-axes",
        "synthetic: {token: {sweeps: {heatmap: {axes: {n: [10, 20]}, seeds: [1]}}}}",
        ["synthetic.token.sweeps.heatmap.axes", "exactly those axes"],
    ),
    (
        "boundary-fits-unknown-sweep",
        "synthetic: {boundary_fits: {sweeps: [atlas_x]}}",
        ["synthetic.boundary_fits.sweeps", "'atlas_x' is not a sweep of synthetic.token"],
    ),
    (
        "boundary-fits-past-the-horizon",
        "synthetic: {boundary_fits: {horizons: [100, 5000]}}",
        ["synthetic.boundary_fits.horizons", "5000", "past every fitted sweep's steps", "atlas 150"],
    ),
    (
        "boundary-fits-along-time-past-the-horizon",
        "synthetic: {boundary_fits: {along_time: [1, 9, 10000]}}",
        ["synthetic.boundary_fits.along_time", "10000", "past every fitted sweep's steps", "atlas 150"],
    ),
    (
        "refine-a-sweep-not-fitted",
        "synthetic: {boundary_fits: {refine: {sweep: delay_scan}}}",
        ["synthetic.boundary_fits.refine.sweep", "'delay_scan'", "not one of the fitted sweeps"],
    ),
    (
        "convergence-seed-not-refined",
        "synthetic: {boundary_fits: {convergence: {seeds: [1, 9]}}}",
        ["synthetic.boundary_fits.convergence.seeds", "[1, 9]", "[9] are not refined", "[1, 2, 3, 4]"],
    ),
    (
        "sweep-snr-range-backwards",
        "synthetic: {token: {sweeps: {atlas: {snr_range: [2, 1]}}}}",
        ["synthetic.token.sweeps.atlas.snr_range", "[2, 1]", "its low end must be below its high end"],
    ),
    (
        "step-size-not-positive",
        "synthetic: {token: {sweeps: {atlas: {fixed: {step_size: 0}}}}}",
        ["synthetic.token.sweeps.atlas.fixed.step_size", "= 0", "must be > 0"],
    ),
    (
        "integrator-unknown",
        "synthetic: {token: {sweeps: {atlas: {fixed: {integrator: rk4}}}}}",
        ["synthetic.token.sweeps.atlas.fixed.integrator", "'rk4'", "must be one of", "'flow'"],
    ),
    (
        "flow-for-the-encoder",
        "synthetic: {encoder: {sweeps: {heatmap: {fixed: {integrator: flow}}}}}",
        ["integrator = 'flow'", "does not apply to model 'encoder'", "its integrators: gd"],
    ),
    (
        "flow-tol-without-the-flow",
        "synthetic: {token: {sweeps: {delay_scan: {fixed: {flow_tol: 0.1}}}}}",
        ["flow_tol = 0.1", "applies to integrator 'flow' only"],
    ),
    (
        "flow-tol-not-positive",
        "synthetic: {token: {sweeps: {atlas: {fixed: {integrator: flow, flow_tol: 0}}}}}",
        ["synthetic.token.sweeps.atlas.fixed.flow_tol", "= 0", "must be > 0"],
    ),
    (
        "resolution-not-above-one",
        "synthetic: {boundary_fits: {resolution: 1}}",
        ["synthetic.boundary_fits.resolution", "= 1:", "must be > 1"],
    ),
    # real data (the smoke config: mnist and rotten, 80 training rows each, pretrain_size 40, n in [8, 16])
    (
        "real-dataset-unknown",
        "real: {use: [mnist, cifar100]}",
        ["real.use", "'cifar100'", "not in real.datasets", "fashion_mnist"],
    ),
    ("real-use-duplicates", "real: {use: [mnist, mnist]}", ["real.use", "['mnist', 'mnist']", "repeated: ['mnist']"]),
    (
        "real-backbone-unknown",
        "real: {datasets: {mnist: {backbone: vit_b16}}}",
        ["real.datasets.mnist.backbone", "'vit_b16'", "not among real.backbones", "dinov2_small"],
    ),
    (
        "real-backbone-kind-unknown",
        "real: {backbones: {minilm: {kind: onnx}}}",
        ["real.backbones.minilm.kind", "'onnx'", "must be one of", "'gt_minilm'"],
    ),
    (
        "real-hub-backbone-without-id",
        "real: {backbones: {minilm: {kind: hub}}}",
        ["real.backbones.minilm.id is missing", "real.backbones.minilm.modality is missing", "a hub backbone"],
    ),
    (
        "real-local-backbone-without-path",
        "real: {backbones: {minilm: {kind: local, modality: text}}}",
        ["real.backbones.minilm.path is missing", "folder"],
    ),
    (
        "real-modality-against-backbone",
        "real: {datasets: {rotten: {modality: image}}}",
        ["real.datasets.rotten.modality", "'image'", "'minilm' reads text"],
    ),
    (
        "real-source-kind-unknown",
        "real: {datasets: {rotten: {source: {kind: kaggle}}}}",
        ["real.datasets.rotten.source.kind", "'kaggle'", "must be one of", "'huggingface'"],
    ),
    (
        "real-n-larger-than-split",
        "real: {datasets: {rotten: {train_size: 30, pretrain_size: 1}}, grid: {n: [8, 40]}}",
        ["real.datasets.rotten", "pretrain_size 1 + n 40 = 41", "training split of 30 rows"],
    ),
    (
        "real-pretrain-plus-n-larger-than-split",
        "real: {datasets: {mnist: {pretrain_size: 70}}}",
        ["real.datasets.mnist", "pretrain_size 70 + n 16 = 86", "training split of 80 rows"],
    ),
    (
        "real-sweep-n-larger-than-split",
        "real: {eta_sweep: {n: 100}}",
        ["real.datasets.mnist", "n 100", "training split of 80 rows"],
    ),
    (
        "real-dataset-n-outside-grid",
        "real: {datasets: {mnist: {n: [8, 32]}}}",
        ["real.datasets.mnist.n", "[8, 32]", "subset of real.grid.n"],
    ),
    ("real-grid-eta-one", "real: {grid: {eta: [0.0, 1.0]}}", ["real.grid.eta[1]", "1.0", "must be < 1"]),
    (
        "real-record-epochs-past-the-end",
        "real: {protocol: {record_epochs: [0, 2, 9]}}",
        ["real.protocol.record_epochs", "[0, 2, 9]", "end at finetune_epochs 4"],
    ),
    ("real-record-epochs-one", "real: {protocol: {record_epochs: 1}}", ["real.protocol.record_epochs", "1"]),
    ("real-grid-n-zero", "real: {grid: {n: [0, 8]}}", ["real.grid.n[0]", "= 0:", "must be >= 1"]),
    (
        "real-one-class",
        "real: {datasets: {rotten: {classes: [fresh]}}}",
        ["real.datasets.rotten.classes", "['fresh']", "at least 2"],
    ),
    (
        "real-sweep-stop-one",
        "real: {eta_sweep: {eta: {start: 0.0, stop: 1.0, step: 0.1}}}",
        ["real.eta_sweep.eta.stop", "1.0", "must be < 1"],
    ),
    (
        "real-sweep-stop-below-start",
        "real: {eta_sweep: {eta: {start: 0.2, stop: 0.1, step: 0.1}}}",
        ["real.eta_sweep.eta", "stop (0.1) is below start (0.2)"],
    ),
    ("real-batch-size-zero", "real: {protocol: {batch_size: 0}}", ["real.protocol.batch_size", "= 0:", "must be >= 1"]),
    (
        "real-unknown-dataset-key",
        "real: {datasets: {mnist: {train_rows: 5}}}",
        ["real.datasets.mnist.train_rows", "unknown key", "train_size"],
    ),
]

# (id, path of the key removed from the smoke config, substrings the error must contain)
MISSING = [
    (
        "missing-mlp-dim",
        ["synthetic", "encoder", "mlp_dim"],
        ["config key synthetic.encoder.mlp_dim is missing", "required"],
    ),
    ("missing-eta", ["synthetic", "defaults", "eta"], ["config key synthetic.defaults.eta is missing", "required"]),
    (
        "missing-settings",
        ["synthetic", "token", "settings"],
        ["config key synthetic.token.settings is missing", "required"],
    ),
    (
        "missing-lambdas",
        ["synthetic", "projection", "lambdas"],
        ["config key synthetic.projection.lambdas is missing", "required"],
    ),
    (
        "missing-real-backbone",
        ["real", "datasets", "mnist", "backbone"],
        ["config key real.datasets.mnist.backbone is missing", "required"],
    ),
]

# legal but suspicious: the run goes ahead, with a warning that names the key and the value
WARN = [
    (
        "eta-flips-no-label",
        "synthetic: {defaults: {eta: 0.05}}",
        ["config warning", "synthetic.defaults.eta = 0.05", "flips no label at n = 10"],
    ),
    (
        "projection-eta-flips-no-label",
        "synthetic: {projection: {eta: 0.04}}",
        ["config warning", "synthetic.projection.eta = 0.04", "flips no label at n = 20"],
    ),
]

# Snakemake itself, dry, for a few representative cases: the schema, a missing key, a real-data
# size checked by the library, a warning; and one of them real (--cores 1), which parses the
# workflow as the dry run does. Every other case (a non-finite value among them) reaches the same
# loader in process, above.
REAL_RUN = "eta-one"  # the case also run for real
END_TO_END = {
    "eta-one",
    "missing-mlp-dim",
    "real-pretrain-plus-n-larger-than-split",
    "eta-flips-no-label",
}


@pytest.fixture(scope="module")
def smoke(root) -> dict:
    """config/config.yaml with config/smoke.yaml merged over it, as Snakemake merges them."""
    cfg = yaml.safe_load((root / "config/config.yaml").read_text())
    update_config(cfg, yaml.safe_load((root / "config/smoke.yaml").read_text()))
    return cfg


def config_of(smoke: dict, extra: str | None = None, missing: list[str] | None = None) -> dict:
    cfg = copy.deepcopy(smoke)
    if extra is not None:
        update_config(cfg, yaml.safe_load(extra))
    if missing is not None:
        node = cfg
        for k in missing[:-1]:
            node = node[k]
        del node[missing[-1]]
    return cfg


def refusal(root, cfg: dict) -> str:
    """The loader's message for ``cfg``; fails the test if it accepts it."""
    with pytest.raises(ConfigError) as err:
        load(cfg, root / "workflow/schemas/config.schema.yaml")
    return str(err.value)


@pytest.mark.parametrize("name, extra, expect", BAD, ids=[c[0] for c in BAD])
def test_bad_value_is_refused(root, smoke, name, extra, expect):
    text = refusal(root, config_of(smoke, extra=extra))
    for part in expect:
        assert part in text, f"{part!r} not in\n{text}"


CEILINGS = ("above",)  # a job over the cluster's ceilings: only packing the jobs can tell


@pytest.mark.parametrize("name, extra, expect", BAD, ids=[c[0] for c in BAD])
def test_bad_value_is_refused_before_any_job_is_planned(root, smoke, name, extra, expect, monkeypatch):
    """Checking happens once, before planning: with the planners that pack jobs replaced by a
    failure, every bad value is still refused with its message (the ceilings' cases aside)."""
    from benign.plan import jobs, real_resources

    if any(word in part for part in expect for word in CEILINGS):
        pytest.skip("refused by packing, which is planning")

    def planned(*args, **kwargs):
        raise AssertionError("a job was planned before the config was checked")

    for module, planner in [(jobs, "synthetic_jobs"), (jobs, "real_cells"), (real_resources, "job_needs"),
                            (real_resources, "feature_parts")]:  # fmt: skip
        monkeypatch.setattr(module, planner, planned)
    text = refusal(root, config_of(smoke, extra=extra))
    for part in expect:
        assert part in text, f"{part!r} not in\n{text}"


@pytest.mark.parametrize("name, key, expect", MISSING, ids=[c[0] for c in MISSING])
def test_missing_key_is_refused(root, smoke, name, key, expect):
    text = refusal(root, config_of(smoke, missing=key))
    for part in expect:
        assert part in text, f"{part!r} not in\n{text}"


@pytest.mark.parametrize("name, extra, expect", WARN, ids=[c[0] for c in WARN])
def test_suspicious_value_warns(root, smoke, name, extra, expect):
    plan = load(config_of(smoke, extra=extra), root / "workflow/schemas/config.schema.yaml")
    text = "\n".join(f"config warning: {w}" for w in plan.warnings)
    for part in expect:
        assert part in text, f"{part!r} not in\n{text}"


def test_the_smoke_config_loads_without_warning(root, smoke):
    assert load(config_of(smoke), root / "workflow/schemas/config.schema.yaml").warnings == []


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, smoke) -> dict[str, dict]:
    """{case: {mode: (exit code, output, whether results/ exists afterwards)}} of Snakemake itself,
    each case in its own copy of the repository, a few at a time."""
    extras = {name: extra for name, extra, _ in BAD + WARN}
    missing = {name: key for name, key, _ in MISSING}

    def outcome(name):
        repo = copy_repo(tmp_path_factory.mktemp(name) / "repo")
        if name in extras:
            (repo / "config/extra.yaml").write_text(extras[name] + "\n")
            args = ("--configfile", "config/smoke.yaml", "config/extra.yaml")
        else:
            (repo / "config/config.yaml").write_text(yaml.safe_dump(config_of(smoke, missing=missing[name])))
            args = ()
        out = {}
        # a warning's run goes ahead: a dry run shows it
        for mode in (("-n",), ("--cores", "1")) if name == REAL_RUN else (("-n",),):
            run = snakemake(repo, *mode, *args, timeout=300)
            out[" ".join(mode)] = (run.returncode, run.stdout + run.stderr, (repo / "results").exists())
        return out

    with ThreadPoolExecutor(max_workers=3) as pool:
        done = {name: pool.submit(outcome, name) for name in sorted(END_TO_END)}
    return {name: future.result() for name, future in done.items()}


EXPECT = {c[0]: c[2] for c in BAD + MISSING + WARN}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(END_TO_END - {c[0] for c in WARN}))
def test_snakemake_refuses_before_any_job(outcomes, name):
    for mode, (code, text, made_results) in outcomes[name].items():
        assert code != 0, f"{mode}: accepted\n{text[-3000:]}"
        assert "invalid configuration" in text, text[-3000:]
        for part in EXPECT[name]:
            assert part in text, f"{mode}: {part!r} not in\n{text[-3000:]}"
        assert "Traceback" not in text, text[-3000:]
        assert not made_results, f"{mode}: results/ was created"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(END_TO_END & {c[0] for c in WARN}))
def test_snakemake_warns_and_goes_ahead(outcomes, name):
    code, text, _ = outcomes[name]["-n"]
    assert code == 0, text[-3000:]
    for part in EXPECT[name]:
        assert part in text, f"{part!r} not in\n{text[-3000:]}"


def test_cases_are_distinct():
    names = [c[0] for c in BAD + MISSING + WARN]
    assert len(names) == len(set(names))
    assert len({c[1] for c in BAD}) == len(BAD)
    assert END_TO_END <= set(names)


def test_every_backbone_kind_names_a_loader_that_exists():
    """A backbone kind's entry carries its loader: a function of the real-data half."""
    from importlib import import_module

    for kind in registry.BACKBONE_KINDS.values():
        module, _, function = kind.loader.partition(":")
        assert callable(getattr(import_module(module), function)), kind.name
