"""Each job's memory and time request (benign/plan/resources.py), the site's ceilings, and
jobs split to fit them."""

import copy
import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from benign.plan import ConfigError, real_resources, resources
from benign.plan import jobs as plan
from benign.plan import validate as cv
from benign.plan.config_values import read, read_cluster
from tests.helpers.workflow_utils import snakemake

REPO = Path(__file__).resolve().parents[2]


def run(**kw):
    return dict(dict(model="token", n=20, T=8, d=1000, sigma=1.0, n_test=200, seed=1, steps=1000, mlp_dim=None), **kw)


def test_estimates_grow_with_the_work():
    base = resources.synthetic_job_need([run()])
    assert resources.synthetic_job_need([run(d=4000)]).mem_mb > base.mem_mb
    assert resources.synthetic_job_need([run(steps=10**6)]).runtime_min > base.runtime_min
    assert resources.synthetic_job_need([run(signal_norm=s) for s in range(40)]).mem_mb > base.mem_mb
    # two batches one after another: the larger memory, the sum of the times
    both = resources.synthetic_job_need([run(steps=10**6), run(steps=10**6, seed=2)])
    assert both.mem_mb == resources.synthetic_job_need([run(steps=10**6)]).mem_mb
    assert both.runtime_min > resources.synthetic_job_need([run(steps=10**6)]).runtime_min
    cuda = resources.synthetic_job_need([run(model="encoder", mlp_dim=64, steps=10**6)], "cuda")
    assert cuda.runtime_min < resources.synthetic_job_need([run(model="encoder", mlp_dim=64, steps=10**6)]).runtime_min
    retry = resources.for_attempt(base, 3)
    assert (retry.mem_mb, retry.runtime_min) == (int(-(-base.mem_mb * 2.25 // 1)), base.runtime_min * 4)


def merged(base: dict, extra: dict) -> dict:
    out = dict(base)
    for key, value in extra.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def config(name: str) -> dict:
    """A config file as the workflow sees it: over the default, validated, with the schema's defaults."""
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    if name != "config.yaml":
        cfg = merged(cfg, yaml.safe_load((REPO / "config" / name).read_text()))
    cv.validate_config(cfg, REPO / "workflow" / "schemas" / "config.schema.yaml")
    return cfg


def runs_of(jobs: dict) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for runs in jobs.values() for r in runs)


def test_jobs_over_the_ceiling_are_split_into_the_same_runs():
    cfg = config("config.yaml")
    whole = plan.synthetic_jobs(read(cfg))
    alone = [resources.synthetic_job_need([r]) for runs in whole.values() for r in runs]
    # every run fits alone, not every job does
    cluster = {
        "device": "cpu",
        "max_mem_mb": max(a.mem_mb for a in alone),
        "max_runtime_min": max(a.runtime_min for a in alone),
    }
    split = plan.synthetic_jobs(read(dict(copy.deepcopy(cfg), cluster=cluster)))
    assert len(split) > len(whole) and runs_of(split) == runs_of(whole)
    ceiling = read_cluster({"cluster": cluster})
    assert all(ceiling.fits(resources.synthetic_job_need(r)) for r in split.values())
    groups = lambda jobs: Counter(job.rsplit("_", 1)[0] for job in jobs)  # one id scheme: {prefix}_{k:02d}
    assert all(re.fullmatch(r".+_\d\d", job) for job in split)
    assert any(groups(split)[g] > groups(whole)[g] for g in groups(whole))


def test_a_run_above_the_ceiling_is_refused_with_its_numbers():
    cfg = dict(config("config.yaml"), cluster={"max_mem_mb": 800})
    with pytest.raises(ConfigError) as err:
        plan.synthetic_jobs(read(cfg))
    message = str(err.value)
    assert "one run (model" in message and "needs" in message and "MB" in message
    assert "800 MB" in message and "raise the ceiling" in message


def test_the_slurm_dry_run_of_the_paper_config_has_no_job_above_the_ceilings():
    """The paper's grids on a CPU partition with 8 GB and 1 h per job: every job's request is
    within the ceilings, and the work is what is planned without a ceiling, only split (the
    same synthetic runs, the same real-data runs, feature caches in parts)."""
    ceiling = {"device": "cpu", "max_mem_mb": 8000, "max_runtime_min": 60}
    out = snakemake(REPO, "-n", "--profile", "profiles/slurm", "--configfile", "config/paper.yaml", "--config",
                    f"cluster={json.dumps(ceiling)}")  # fmt: skip
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    requests = re.findall(r"mem_mb=(\d+).*?runtime=(\d+)", out.stdout)
    assert len(requests) > 100
    assert max(int(m) for m, _ in requests) <= 8000 and max(int(r) for _, r in requests) <= 60
    assert "resources/features/cifar10/part15-of-16.safetensors" in out.stdout
    cfg = config("paper.yaml")
    tight = dict(cfg, cluster=ceiling)
    assert runs_of(plan.synthetic_jobs(read(tight))) == runs_of(plan.synthetic_jobs(read(cfg)))
    assert real_runs(plan.real_cells(read(tight))) == real_runs(plan.real_cells(read(cfg)))
    parts = feature_parts(read(tight))
    assert parts["cifar10"] == 16 and feature_parts(read(cfg)) == dict.fromkeys(parts, 1)
    # a GPU partition with 16 GB and 4 h
    gpu = read_cluster({"cluster": {"device": "cuda", "max_mem_mb": 16000, "max_runtime_min": 240}})
    jobs = plan.synthetic_jobs(read(dict(cfg, cluster=vars(gpu))))
    assert runs_of(jobs) == runs_of(plan.synthetic_jobs(read(cfg)))
    assert all(gpu.fits(resources.synthetic_job_need(r, "cuda")) for r in jobs.values())
    on_gpu = read(dict(cfg, cluster=vars(gpu)))
    needs = real_resources.job_needs(on_gpu, plan.real_cells(on_gpu))
    assert all(gpu.fits(need) for rule in needs.values() for need in rule.values())


def feature_parts(config) -> dict[str, int]:
    """The parts of each data set's feature cache, for the cells the config plans."""
    return real_resources.feature_parts(config, plan.real_cells(config))


def real_runs(cells: dict) -> list[tuple]:
    return sorted((c["dataset"], c["seed"], c["n"], e) for c in cells.values() for e in c["etas"])


def test_a_retry_asks_for_more_up_to_the_ceilings():
    need = resources.Need(3000, 40)
    assert resources.for_attempt(need, 1) == need
    assert resources.for_attempt(need, 3) == resources.Need(6750, 160)
    cluster = resources.Cluster("cpu", 8000, 60)
    assert resources.for_attempt(need, 2, cluster) == resources.Need(4500, 60)
    assert resources.for_attempt(need, 3, cluster) == resources.Need(6750, 60)
    assert resources.for_attempt(resources.Need(7000, 50), 3, cluster) == resources.Need(8000, 60)


def test_the_slurm_profile_groups_every_short_rule():
    """Aggregation, tables, figures and the summary go to SLURM together (one job of the
    profile's group ``cluster.group``), so a new artifact or model is grouped too, with no line
    of its own; training jobs go alone. Read from the smoke DAG's dry run with that group."""
    import subprocess
    import sys

    profile = yaml.safe_load((REPO / "profiles/slurm/config.v8+.yaml").read_text())
    group = profile["config"]["cluster"]["group"]
    out = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", "config/smoke.yaml", "--config",
                          f"cluster={{'group': '{group}'}}"], cwd=REPO, capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    grouped = set(re.findall(r"^    rule (\w+):", out.stdout, re.M))  # a group job's members are indented
    alone = set(re.findall(r"^rule (\w+):", out.stdout, re.M))
    assert f"Group job {group}" in out.stdout
    training = {"train_synthetic", "train_max_margin", "plan_refinement", "fetch_dataset", "features_real",
                "pretrain_real", "train_real"}  # fmt: skip
    assert alone <= training | {"all"}, alone - training
    assert {"aggregate_synthetic", "aggregate_real", "token_projection_points", "summary",
            "figure_encoder_softmax_dynamics", "table_real_eta0_1", "table_regime_boundaries"} <= grouped  # fmt: skip
    assert not grouped & training


def test_the_faithful_config_plans_n_1000_and_whole_test_splits():
    """config/faithful.yaml: 224 px, n = 1000 where the rows exist, every test row."""
    cfg = config("faithful.yaml")
    cells = plan.real_cells(read(cfg))
    assert {c["n"] for c in cells.values() if c["dataset"] == "mnist"} == {20, 200}
    assert {c["n"] for c in cells.values() if c["dataset"] != "mnist"} == {20, 200, 1000}
    assert cfg["real"]["datasets"]["fashion_mnist"]["subsample"]["test"] is None
    assert cfg["real"]["backbones"]["dinov2_small"]["image_size"] == 224


def test_the_cluster_block_of_the_schema_is_the_clusters_fields():
    """One owner: the schema's cluster keys are written from resources.Cluster's fields (the
    hand-written source names none), its device kinds the planner's."""
    import dataclasses

    import yaml

    from benign.plan import schema

    assert yaml.safe_load(schema.SOURCE.read_text())["properties"]["cluster"]["properties"] == {}
    block = schema.load()["properties"]["cluster"]["properties"]
    assert list(block) == [f.name for f in dataclasses.fields(resources.Cluster)]
    assert block["device"]["enum"] == list(resources.DEVICE_KINDS)
    assert all(entry["description"] for entry in block.values())


def test_the_limit_jobs_need_follows_its_lines():
    """One line at n T = 640 (n_test 1000) is its measured 6.1 s, twice for safety, plus a start;
    lines add up, and a larger n T costs more per line."""
    from benign.plan.resources import limit_need

    one = limit_need([{"n": 80, "T": 8, "n_test": 1000}])
    assert one.runtime_min == math.ceil((60 + 2 * 6.1) / 60)
    many = limit_need([{"n": 80, "T": 8, "n_test": 1000}] * 100)
    assert many.runtime_min == math.ceil((60 + 2 * 610) / 60)
    assert limit_need([{"n": 320, "T": 8, "n_test": 1000}]).runtime_min > one.runtime_min
    assert limit_need([{"n": 320, "T": 8, "n_test": 1000}]).mem_mb > one.mem_mb
