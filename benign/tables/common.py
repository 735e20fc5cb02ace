"""Helpers shared by the tables: seed statistics, cell formatting and atomic CSV + Markdown output."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from benign.core.io import atomic_path, write_text

PathLike = str | os.PathLike
MISSING = "—"


def seed_stats(df: pd.DataFrame, keys: Sequence[str], columns: Sequence[str]) -> pd.DataFrame:
    """Per group of ``keys`` (first-appearance order): ``seeds`` (ok runs), ``failed`` (others)
    and ``<col>_mean`` / ``<col>_std`` (population std) of each column over the ok runs."""
    keys = list(keys)
    ok = df["status"] == "ok"
    counts = df.assign(_ok=ok).groupby(keys, sort=False)["_ok"].agg(seeds="sum", total="size")
    stats = {}
    for col in columns:
        grouped = df[ok].groupby(keys, sort=False)[col]
        stats[f"{col}_mean"] = grouped.agg(lambda s: np.mean(s.to_numpy(dtype=float)))
        stats[f"{col}_std"] = grouped.agg(lambda s: np.std(s.to_numpy(dtype=float), ddof=0))
    counts["failed"] = counts.pop("total") - counts["seeds"]
    return counts.join(pd.DataFrame(stats), how="left").reset_index()


def pm(mean: float, std: float, digits: int) -> str:
    """'mean ± std', or '—' when there is no number."""
    if not np.isfinite(mean):
        return MISSING
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def num(value: float, digits: int) -> str:
    """``value`` to ``digits`` decimals, or '—' when there is no number."""
    return f"{value:.{digits}f}" if np.isfinite(value) else MISSING


def seeds_cell(table: pd.DataFrame) -> pd.Series:
    """'3' or '3 (1 failed)' per row of a seed_stats table."""
    return pd.Series(
        [f"{s}" + (f" ({f} failed)" if f else "") for s, f in zip(table["seeds"], table["failed"])], index=table.index
    )


def markdown_table(df: pd.DataFrame) -> str:
    """``df`` as a Markdown table, with '|' in cells and headers escaped."""
    cells = df.astype(str).map(lambda s: s.replace("|", r"\|"))
    lines = [
        "| " + " | ".join(str(c).replace("|", r"\|") for c in cells.columns) + " |",
        "|" + "|".join("---" for _ in cells.columns) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in cells.itertuples(index=False)]
    return "\n".join(lines)


def write(
    table: pd.DataFrame, display: pd.DataFrame, header: Sequence[str], stem: PathLike, footer: Sequence[str] = ()
) -> None:
    """``table`` as <stem>.csv (the numbers); ``header`` paragraphs, ``display`` and ``footer``
    paragraphs as <stem>.md."""
    with atomic_path(Path(f"{os.fspath(stem)}.csv")) as tmp:
        table.to_csv(tmp, index=False)
    write_text(Path(f"{os.fspath(stem)}.md"), "\n\n".join([*header, markdown_table(display), *footer]) + "\n")
