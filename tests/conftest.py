import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # reference_models
torch.set_num_threads(1)  # tests use tiny tensors; one thread avoids oversubscribing a shared machine


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
