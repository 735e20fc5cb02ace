"""What a run's training jobs took, per part: each job's runs table records every run's share of
its job's wall time (``wall_time_s``), and a job's part is named from its path as the forecast
(benign.plan.forecast) names the part it prices, so that the summary sets each beside the other.
Here, in the bottom layer, so that the summary's job reads no planning code."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from benign.core import paths

SYNTHETIC, REAL = "synthetic half", "real half"


def group(job: str) -> str:
    """A planned job's part: its id less the job number (``token_atlas_03`` -> ``train token_atlas``)."""
    return "train " + re.sub(r"_\d+$", "", job)


def job_part(path: str) -> tuple[str, str]:
    """(half, part) of a training job's runs table, by its path (benign.core.paths)."""
    folder, job = Path(path).parent.parent, Path(path).parent.name
    if folder.match(str(Path(paths.REAL_JOB).parent.parent)):
        return REAL, "real phase 2"
    if folder.match(str(Path(paths.REFINEMENT_JOB).parent.parent)):
        return SYNTHETIC, "step check" if "convergence" in job else "refinement"
    return SYNTHETIC, group(job)


def measured(files) -> dict[str, tuple[str, float]]:
    """{part: (half, seconds)} the training jobs whose runs tables are ``files`` took (the sum of
    their runs' ``wall_time_s``), the synthetic half first."""
    out: dict[str, tuple[str, float]] = {}
    for path in sorted(map(str, files)):
        half, part = job_part(path)
        seconds = float(pd.read_parquet(path, columns=["wall_time_s"])["wall_time_s"].sum())
        out[part] = (half, out.get(part, (half, 0.0))[1] + seconds)
    return dict(sorted(out.items(), key=lambda kv: (kv[1][0] != SYNTHETIC, kv[0])))
