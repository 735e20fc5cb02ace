from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
torch.set_num_threads(1)  # tests use tiny tensors; one thread avoids oversubscribing a shared machine


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
