"""Config expansion into jobs (benign.config.plan), and the checks a JSON schema cannot express
(benign.config.validate)."""

import copy

import pytest
import yaml

from benign.config import ConfigError, plan
from benign.config import validate as bc


@pytest.fixture
def cfg(root):
    return yaml.safe_load((root / "config/config.yaml").read_text())


def test_paper_grid_is_39_by_39(cfg):
    jobs = plan.synthetic_jobs(cfg)
    heat = [r for job, runs in jobs.items() if job.startswith("token_heatmap") for r in runs]
    assert len(heat) == 39 * 39 * len(cfg["synthetic"]["token"]["sweeps"]["heatmap"]["seeds"])
    assert {r["d"] for r in heat} == set(range(250, 5001, 125))
    assert min(r["signal_norm"] for r in heat) == 5 and max(r["signal_norm"] for r in heat) == 100


def test_grid_forms():
    assert bc.grid({"start": 5, "stop": 10, "step": 2.5}, "x") == [5.0, 7.5, 10.0]
    assert bc.grid([3, 1], "x") == [3, 1]
    with pytest.raises(ConfigError, match="x is empty"):
        bc.grid([], "x")
    with pytest.raises(ConfigError, match="duplicate"):
        bc.grid([1, 1], "x")


def test_warning_for_eta_that_flips_nothing(cfg):
    cfg = copy.deepcopy(cfg)
    cfg["synthetic"]["defaults"]["eta"] = 0.01
    assert any("flips no label" in w for w in bc.warnings(cfg))


def _merged(base: dict, over: dict) -> dict:
    """A config file given with --configfile, merged into config/config.yaml as Snakemake merges."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def test_smoke_config_replaces_every_default_sweep(cfg, root):
    """A default sweep the smoke config does not replace would train at full size in the tests."""
    smoke = _merged(cfg, yaml.safe_load((root / "config/smoke.yaml").read_text()))
    runs = [r for job in plan.synthetic_jobs(smoke).values() for r in job]
    assert max(r["steps"] for r in runs) <= 300 and max(r["d"] for r in runs) <= 200, (
        "a full-size run in the smoke config"
    )
