"""Job fingerprints come from what each job imports (benign/core/fingerprint.py), so an edit reruns
exactly the jobs that run the edited module.

Two kinds of check:
- the default config's whole DAG, marked done without running anything (``--touch`` over empty
  outputs, which records the jobs' params), then a module edited in a copy and dry-run: only the
  jobs that import it are scheduled;
- each job's entry point run for real in a fresh interpreter: every ``benign`` module it loads
  is in its fingerprint.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from benign.artifacts.table import ARTIFACTS
from benign.core import fingerprint, paths
from benign.synthetic import registry
from tests.helpers.workflow_utils import ROOT, copy_repo, planned_jobs, snakemake

TRAINING = {"train_synthetic", "train_real", "features_real", "fetch_dataset", "token_projection_points"}


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    """A copy of the repository whose default DAG is marked complete (no job has run)."""
    repo = copy_repo(tmp_path_factory.mktemp("touched") / "repo")
    # The refinement's plan is a checkpoint whose content the DAG reads: an empty plan (no
    # refinement job), so that touching it leaves a plan to read.
    plan = repo / paths.REFINEMENT_PLAN
    plan.parent.mkdir(parents=True)
    plan.write_text("{}\n")
    # Touching jobs records their params (the outputs do not exist yet, so every job counts);
    # then the outputs are made, empty, and touched in the DAG's order.
    assert snakemake(repo, "--touch", "--cores", "1").returncode == 0
    out = snakemake(repo, "--detailed-summary")
    assert out.returncode == 0, out.stderr[-3000:]
    for line in out.stdout.splitlines()[1:]:
        path = repo / line.split("\t")[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    out = snakemake(repo, "--touch", "--cores", "1")
    assert out.returncode == 0, out.stderr[-3000:]
    out = snakemake(repo, "-n")  # nothing planned, and every output with its provenance
    assert out.returncode == 0 and "Job stats:" not in out.stdout, out.stdout[-3000:]
    assert "missing provenance" not in out.stdout
    return repo


def edited(done, tmp_path, *modules: str):
    repo = tmp_path / "repo"
    shutil.copytree(done, repo, symlinks=True)
    for module in modules:
        path = repo / "benign" / module
        path.write_text(path.read_text() + "\n# edited\n")
    return planned_jobs(repo)


def test_editing_theory_reruns_no_training_job(done, tmp_path):
    jobs = edited(done, tmp_path, "analysis/theory.py")
    assert jobs and not TRAINING & set(jobs), jobs  # figures and tables only
    assert "figure_loss_heatmap" in jobs and "table_synthetic_regimes" in jobs


def test_editing_a_config_message_or_the_table_of_entries_reruns_nothing(done, tmp_path):
    """The render jobs read their entries as params (``Artifact.recipe``), not the modules that
    hold the table of entries."""
    assert edited(done, tmp_path, "plan/validate.py", "artifacts/synthetic.py", "artifacts/real.py") == {}


@pytest.mark.parametrize("module", ["figures/heatmaps.py", "tables/real.py", "analysis/metrics.py"])
def test_editing_figures_or_tables_reruns_no_training_job(done, tmp_path, module):
    jobs = edited(done, tmp_path, module)
    assert jobs and not TRAINING & set(jobs), jobs


def test_an_entry_edit_reruns_its_artifact_alone(done, tmp_path):
    """Table 2's noise rates changed in its entry: that table is drawn again, and the summary
    that lists every table; Table 6, whose entry shares everything else with it, is not."""
    repo = tmp_path / "repo"
    shutil.copytree(done, repo, symlinks=True)
    path = repo / "benign/artifacts/real.py"
    text = path.read_text()
    assert text.count('"etas": Value([0.1])') == 1
    path.write_text(text.replace('"etas": Value([0.1])', '"etas": Value([0.1, 0.2])'))
    assert set(planned_jobs(repo)) == {"table_real_eta0_1", "summary", "all"}


def test_editing_the_encoder_reruns_only_the_encoder_jobs(done, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(done, repo, symlinks=True)
    path = repo / "benign/synthetic/models/encoder.py"
    path.write_text(path.read_text() + "\n# edited\n")
    dry = snakemake(repo, "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    trained = set(re.findall(r"wildcards: job=(\S+)", dry.stdout + dry.stderr))
    assert trained and all(job.startswith("encoder_") for job in trained), trained
    assert not {"train_real", "features_real"} & set(planned_jobs(repo))


PROBE = """
import json, sys
sys.path.insert(0, {root!r})
{body}
print(json.dumps(sorted(m for m in sys.modules if m == "benign" or m.startswith("benign."))))
"""


def loaded(body: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(root=str(ROOT), body=body)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.parametrize("name", list(registry.MODELS))
def test_a_training_job_loads_only_modules_of_its_fingerprint(name):
    """Train one tiny run of each model as the training script does; every module loaded,
    the model picked by name included, is covered."""
    keys = {"mlp_dim": 4} if "mlp_dim" in registry.MODELS[name].run_keys else {}
    body = (
        "from benign.core.io import log_to\nfrom benign.core.schema import write_parquet\nfrom benign.synthetic.schema import ATTENTION, CURVES, RUNS\n"
        "from benign.synthetic.trainer import RunSpec, train_runs\n"
        f"train_runs([RunSpec(model={name!r}, d=6, n=4, n_test=4, steps=3, **{keys!r})], device='cpu')"
    )
    covered = set(fingerprint.closure(ROOT / "workflow/scripts/train_synthetic.py", registry.MODELS[name].module))
    assert loaded(body) <= covered, loaded(body) - covered


@pytest.mark.parametrize("script", sorted((ROOT / "workflow/scripts").glob("*.py")), ids=lambda p: p.stem)
def test_every_script_imports_only_modules_of_its_fingerprint(script):
    """Every script's imports, executed: nothing loaded that its fingerprint leaves out."""
    imports = "\n".join(line for line in script.read_text().splitlines() if line.startswith(("import ", "from ")))
    covered = set(fingerprint.closure(script))
    assert loaded(imports) <= covered, loaded(imports) - covered


def test_closure_follows_imports_and_parent_packages():
    names = fingerprint.closure("benign.synthetic.models.encoder")
    assert {
        "benign",
        "benign.synthetic.models",
        "benign.synthetic.models.batch_data",
        "benign.synthetic.speed.deferred",
        "benign.synthetic.data_model",
    } <= set(names)
    assert "benign.analysis.theory" not in names and "benign.plan.validate" not in names


# Each module imported alone, in a child forked from one interpreter that holds the third-party
# libraries already (they are not the package's): what importing it loads of the package.
PROBE_EACH = """
import json, os, sys
sys.path.insert(0, {root!r})
import matplotlib.pyplot, numpy, pandas, scipy.stats  # noqa: F401  shared by every child, none of ours
found = {{}}
for name in {names!r}:
    read, write = os.pipe()
    if (pid := os.fork()) == 0:
        __import__(name)
        os.write(write, json.dumps(sorted(m for m in sys.modules if m == "benign" or m.startswith("benign."))).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        found[name] = json.loads(pipe.read())
    os.waitpid(pid, 0)
print(json.dumps(found))
"""


def test_a_generated_rule_loads_only_modules_of_its_fingerprint():
    """The render script loads the modules its entry's recipe names (the function's, the
    view's, the input kinds'), never the table of entries: each rule's fingerprint covers
    everything that loading them loads, so an edit to another entry reruns nothing here."""
    names = sorted({m for a in ARTIFACTS.values() for m in (*a.modules, a.kinds)})
    out = subprocess.run(
        [sys.executable, "-c", PROBE_EACH.format(root=str(ROOT), names=names)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-3000:]
    found = {name: set(mods) for name, mods in json.loads(out.stdout.splitlines()[-1]).items()}
    assert not {a.home for a in ARTIFACTS.values()} & set().union(*found.values())
    for a in ARTIFACTS.values():
        loads = set().union(*(found[m] for m in (*a.modules, a.kinds)))
        covered = set(fingerprint.closure(ROOT / "workflow/scripts/render.py", *a.modules, a.kinds))
        assert loads <= covered, (a.key, loads - covered)
