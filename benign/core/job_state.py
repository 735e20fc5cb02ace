"""A training job's state folder: its checkpoints and its finished work, kept until the
workflow has accepted the job's outputs.

A job can finish its work and still be ruled failed: SLURM marks a job TIMEOUT when its time
limit falls while the outputs are being written, and Snakemake then removes the outputs and
retries it. So a job never removes its own state. It records in the folder which outputs
release it, and the workflow's success handler (``Snakefile``: ``onsuccess``) removes every
folder whose outputs all exist (:func:`release`). A retry that finds finished state of the
same identity writes the outputs from it without training again; state of another identity
(other runs, other code) is never read.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

from benign.core import paths
from benign.core.io import write_json

ROOT = Path(paths.CHECKPOINTS)  # relative to the workflow's working directory
RELEASED_BY = "released_by.json"  # the outputs that release a state folder


def claim(folder: str | Path, outputs: Iterable[str | Path]) -> Path:
    """Create ``folder`` (if needed) and record that it is released once ``outputs`` all exist
    (paths relative to the working directory, as Snakemake gives them)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / RELEASED_BY, sorted(str(p) for p in outputs))
    return folder


def release(root: str | Path = ROOT, base: str | Path = ".") -> list[Path]:
    """Remove every state folder under ``root`` whose recorded outputs all exist below ``base``.
    Returns the folders removed. A folder without a record, or with an output missing, stays."""
    root, base = Path(root), Path(base)
    removed = []
    for record in sorted(root.rglob(RELEASED_BY)) if root.is_dir() else []:
        folder = record.parent
        try:
            outputs = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        if outputs and all((base / p).exists() for p in outputs):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    for folder in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True) if root.is_dir() else []:
        if not any(folder.iterdir()):
            folder.rmdir()
    if root.is_dir() and not any(root.iterdir()):
        root.rmdir()
    return removed
