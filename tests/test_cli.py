"""python -m benign synthetic ... --json"""

import json
import subprocess
import sys


def run(*args):
    return subprocess.run([sys.executable, "-m", "benign", "synthetic", *args], capture_output=True, text=True)


def test_one_run_prints_json():
    out = run("--d", "30", "--signal-norm", "5", "--n-test", "20", "--steps", "20", "--json")
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)
    for key in (
        "train_loss",
        "test_loss",
        "train_acc",
        "test_acc",
        "train_acc_noisy",
        "regime",
        "head_acc_regime",
        "test_loss_normalised",
        "test_sel_relevant",
        "test_loss_uniform",
        "test_acc_uniform",
    ):
        assert key in row
    assert 0 < row["test_loss_normalised"] < 1  # 20 steps: attention has moved from uniform, not yet selected
    assert row["d"] == 30 and row["n"] == 20 and row["steps"] == 20 and row["eta"] == 0.2  # paper defaults kept


def test_bad_value_is_named():
    out = run("--eta", "1.5")
    assert out.returncode == 2
    assert "--eta" in out.stderr and "1.5" in out.stderr


def test_every_registered_model_trains_from_the_command_line():
    from benign.synthetic import registry

    for name in registry.MODELS:
        extra = ("--mlp-dim", "8") if "mlp_dim" in registry.MODELS[name].run_keys else ()
        out = run(
            "--model", name, "--d", "16", "--signal-norm", "5", "--n-test", "20", "--steps", "5", *extra, "--json"
        )
        assert out.returncode == 0, (name, out.stderr)
        row = json.loads(out.stdout)
        assert row["model"] == name and row["status"] == "ok" and row["regime"] is not None


def test_the_artifact_index_of_the_docs_is_the_tables(root):
    """README.md and docs/artifacts.md hold the index written from benign/artifacts/."""
    from benign.artifacts import table as artifacts

    for name in artifacts.INDEXED:
        text = (root / name).read_text()
        assert artifacts.with_index(text) == text, f"{name}: run python -m benign artifacts --write"
        assert artifacts.index() in text


def test_the_readme_stays_short_and_links_the_generated_results(root):
    """Short in its own words: the generated artifact index, which grows by a line an artifact,
    is not counted (a new artifact never breaks this test)."""
    from benign.artifacts.table import BEGIN, END

    readme = (root / "README.md").read_text()
    before, rest = readme.split(BEGIN)
    own = before + rest.split(END)[1]
    assert len(own.splitlines()) < 120
    assert "docs/results.md" in readme and (root / "docs/results.md").is_file()
