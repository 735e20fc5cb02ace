"""The synthetic half's input kinds: the synthetic Parquet schemas and the files that hold them,
and the atlas's tables that other artifacts read. The render script loads this module, not the
entries (benign/artifacts/synthetic.py), so an entry's edit reruns its own artifact alone."""

from __future__ import annotations

import pandas as pd

from benign.artifacts.entry import InputKind, parquet, table_file
from benign.core import paths
from benign.synthetic import limit_schema
from benign.synthetic import schema as syn_schema

# The kinds of input. The per-model kinds (runs, curves, attention) are read of a model: FITS the
# model of synthetic.boundary_fits, ALL every configured model, MODEL the model of a per-model
# artifact, or a model by its name. FITS_TABLE(MODEL): the regime-boundaries table where that
# model's atlas is fitted, else none. An input with no file is passed as None.
RUNS = InputKind("runs", parquet(syn_schema.RUNS), paths.fill(paths.SYNTHETIC, table="runs"), per_model=True)
CURVES = InputKind("curves", parquet(syn_schema.CURVES), paths.fill(paths.SYNTHETIC, table="curves"), per_model=True)
ATTENTION = InputKind("attention", parquet(syn_schema.ATTENTION), paths.fill(paths.SYNTHETIC, table="attention"),
                      per_model=True)  # fmt: skip
# one sweep's own runs and curves (the refined sweep's with its refinement's), of the fitted sweeps
# (FITS) or of a named one (SweepOf): an artifact waits for the jobs of the sweeps it reads alone
SWEEP_RUNS = InputKind("sweep_runs", parquet(syn_schema.RUNS), paths.fill(paths.SWEEP, table="runs"), per_sweep=True)
SWEEP_CURVES = InputKind("sweep_curves", parquet(syn_schema.CURVES), paths.fill(paths.SWEEP, table="curves"),
                         per_sweep=True)  # fmt: skip
FITS_TABLE = InputKind("fits", pd.read_csv, table_file("regime_boundaries"), model_only=True)
REGIME_MODEL = InputKind("regime_model", pd.read_csv, table_file("regime_model"))
ALONG_TIME_TABLE = InputKind("along_time", pd.read_csv, table_file("boundaries_along_time"))
ALIGNMENT = InputKind("alignment", parquet(syn_schema.ALIGNMENT), paths.MAX_MARGIN, expand="max_margin_model")
POINTS = InputKind("points", pd.read_parquet, paths.TOKEN_PROJECTION)
LIMIT = InputKind("limit", parquet(limit_schema.LIMIT), paths.fill(paths.LIMIT, table="limit"))
LIMIT_SELECTION = InputKind(
    "limit_selection", parquet(limit_schema.LIMIT_SELECTION), paths.fill(paths.LIMIT, table="selection")
)
KINDS = {k.name: k for k in (RUNS, CURVES, ATTENTION, SWEEP_RUNS, SWEEP_CURVES, FITS_TABLE, REGIME_MODEL,
                             ALONG_TIME_TABLE, ALIGNMENT, POINTS, LIMIT, LIMIT_SELECTION)}  # fmt: skip
