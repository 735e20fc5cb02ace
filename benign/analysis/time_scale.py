"""The theory's time is lr t: does a run at (k lr, t / k) end where the run at (lr, t) ends?
(docs/regimes.md#time-scale)

Gradient descent at step size lr follows the gradient flow up to O(lr) per unit of lr t, so
the two runs agree where lr is small enough. Where they agree for a k, a horizon of lr t can be
reached in k times fewer steps.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.theory import Criteria, classify_regimes
from benign.synthetic import spec

AGREEMENT = 0.98  # a factor qualifies when at least this share of runs keep their label
MATCH = tuple(k for k in spec.NUMBERS if k not in ("lr", "steps"))  # one run's data, seed and model


def scaled(run: dict, k: int) -> dict:
    """``run`` at k times its learning rate for 1/k of its steps (its logging as it was)."""
    if run["steps"] % k:
        raise ValueError(f"steps = {run['steps']} is not a multiple of the factor {k}")
    setting = f"{run['setting']}_lr{k}"
    return {**run, "lr": run["lr"] * k, "steps": run["steps"] // k, "setting": setting, "sweeps": [setting]}


def compare(base: pd.DataFrame, others: dict[int, pd.DataFrame], criteria: Criteria) -> pd.DataFrame:
    """One row per factor k: how many runs at (k lr, t / k) were matched to their run at (lr, t)
    (same data, seed and norm), the share whose final regime label agrees, the largest and the
    median |delta r| (r: the normalised test loss), and whether k qualifies."""

    def labelled(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame[frame["status"] == "ok"]
        regime = classify_regimes(frame["train_acc_noisy"], frame["test_loss_normalised"], frame["test_sel_relevant"],
                                  criteria)  # fmt: skip
        return frame.assign(label=np.asarray(regime, dtype=object))

    base = labelled(base)
    rows = []
    for k, frame in sorted(others.items()):
        pairs = base.merge(labelled(frame), on=[c for c in MATCH if c in base and c in frame], suffixes=("", "_k"))
        delta = (pairs["test_loss_normalised"] - pairs["test_loss_normalised_k"]).abs()
        agree = float((pairs["label"] == pairs["label_k"]).mean()) if len(pairs) else float("nan")
        rows.append({"k": k, "runs": len(pairs), "lr t": float((pairs["lr"] * pairs["steps"]).max()) if len(pairs) else 0,
                     "labels_agree": agree, "max_abs_delta_r": float(delta.max()), "median_abs_delta_r": float(delta.median()),
                     "qualifies": bool(agree >= AGREEMENT)})  # fmt: skip
    return pd.DataFrame(rows)


def largest_factor(table: pd.DataFrame) -> int | None:
    """The largest k whose labels agree on at least ``AGREEMENT`` of the runs; None if none does."""
    ok = table.loc[table["qualifies"], "k"]
    return int(ok.max()) if len(ok) else None
