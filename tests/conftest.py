from pathlib import Path

import pytest
import torch

from tests.helpers import slurm

ROOT = Path(__file__).resolve().parents[1]
torch.set_num_threads(1)  # tests use tiny tensors; one thread avoids oversubscribing a shared machine


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session", autouse=True)
def slurm_runs(request, tmp_path_factory):
    """The SLURM tests' runs, started as the session begins when it holds SLURM tests: they
    mostly wait on the scheduler, so the other tests run meanwhile. None when no SLURM test is
    selected; why not, when no cluster answers."""
    if not any(item.get_closest_marker("slurm") for item in request.session.items):
        yield None
        return
    reason = slurm.slurm_unavailable()
    if reason:
        yield reason
        return
    with slurm.started_runs(tmp_path_factory.mktemp("slurm")) as runs:
        yield runs
