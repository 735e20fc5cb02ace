"""The tables the atlas's computed limit writes (benign.synthetic.svm_limit), torch-free: the
artifact table reads them at parse time. Apart from benign.synthetic.schema, which every training
job imports, so that an edit here reruns none of them.

- ``LIMIT``: one row per (line, ||mu||, selection) evaluated: the line's draw as the runs name it;
  the selection, the W-frozen twin's at the horizon ("run") or each sample's token of highest
  score ("global"); ``refined`` where the norm was added about a crossing; the selection's
  separability and ||p^mm||; the saturated softmax's test error of the hard-max readout and test
  share attending to the relevant token; the kinds of token the selection picks on the clean and
  the flipped samples; the share of samples on which it differs from the global one, whose
  selection is locally optimal, and (the twin's) that changed in the decade of time before the
  horizon; the cosine of the twin's p at the horizon with p^mm; the twin's own hard-max test error
  and relevant-token share there (its plateau).
- ``LIMIT_SELECTION``: the global selection's kinds at each atlas run's data (run_id).
"""

from __future__ import annotations

import pyarrow as pa

KINDS = ("relevant", "weak_true", "weak_opposite", "irrelevant")  # as benign.synthetic.selection names them
_KIND_SHARES = [("clean_sel_relevant", pa.float64()), *[(f"noisy_sel_{k}", pa.float64()) for k in KINDS]]
LIMIT = pa.schema(
    [("d", pa.int64()), ("n", pa.int64()), ("T", pa.int64()), ("rho", pa.float64()), ("eta", pa.float64()),
     ("sigma", pa.float64()), ("n_test", pa.int64()), ("seed", pa.int64()), ("engine", pa.string()),
     ("signal_norm", pa.float64()), ("selection", pa.string()), ("refined", pa.bool_()), ("feasible", pa.bool_()),
     ("svm_norm", pa.float64()), ("test_err_hardmax", pa.float64()), ("test_sel_relevant", pa.float64()),
     *_KIND_SHARES, ("differs", pa.float64()), ("locally_optimal", pa.float64()), ("changed", pa.float64()),
     ("cosine", pa.float64()), ("test_err_trained", pa.float64()), ("test_sel_trained", pa.float64())]
)  # fmt: skip
LIMIT_SELECTION = pa.schema([("run_id", pa.string()), *_KIND_SHARES])
