"""Atomic file output: every file appears complete or not at all."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds.

    The temporary name keeps the suffix so that writers which infer the format from the
    extension (matplotlib, pandas) still work. Once the rename is done, temporary files that an
    earlier writer of ``path`` left when it was killed are removed (a path has one writer).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.replace(tmp, path)
        for stale in path.parent.glob(f".{path.stem}.*.tmp{path.suffix}"):
            stale.unlink(missing_ok=True)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_json(path: str | os.PathLike, obj) -> None:
    write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def log_to(path: str | os.PathLike, level: int = logging.INFO) -> None:
    """Send the library's log lines (progress, warnings) to a job's log file."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[logging.FileHandler(path, mode="w")],
        force=True,
    )
