import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # reference_models


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
