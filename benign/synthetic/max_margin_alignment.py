"""How far trained attention is from the attention-SVM direction, over training (docs/max_margin.md).

Tarzanagh, Li, Zhang and Oymak (NeurIPS 2023) prove for f(X) = v^T X^T softmax(X W p) with W
and v fixed that gradient descent on p, started near the max-margin direction of the tokens it
selects, converges in direction to that direction: p(t) / ||p(t)|| -> p^mm / ||p^mm||, with
p^mm the attention-SVM solution of the selected tokens (``benign.synthetic.max_margin``). Our tokens have
d >> n T, so any selection is separable and the prediction is local: along training, p(t)
aligns with p^mm(a(t)), a(t) the token each sample attends to most at step t.

At every logged step this module records, per run: the cosine between the direction and the
SVM direction of the current selection, the margins, which token clean and noisy samples
select, and whether the selection changed since the previous logged step.

- The W-fixed variants (``token_p_w0``, ``token_p_identity``) are the theorem's setting: the
  direction is p, the keys W0^T x_t (or x_t).
- The paper's model (``token``: W and p trained) is exploration, not a theorem check: the
  direction is the effective query W p, the keys are the raw tokens x_t.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from benign.core.device import peak_memory_mb
from benign.synthetic import models, registry, spec
from benign.synthetic.max_margin import locally_optimal, margins_from_scores, selection, svm_direction_from_gram
from benign.synthetic.schema import ALIGNMENT
from benign.synthetic.selection import hardmax_error
from benign.synthetic.trainer import log_steps

log = logging.getLogger("benign.synthetic.max_margin_alignment")

SIGNAL, WEAK_OWN, WEAK_OPPOSITE = 0, 1, 2  # token indices: mu_y, rho mu_y, rho mu_{-y} (the paper's tokens 1, 2, 3)
COLUMNS = (
    ALIGNMENT.names
)  # the run's parameters, the step's numbers, then the measured time and peak (benign/synthetic/schema.py)


def keys_of(model_name: str) -> str:
    """Which keys the direction is compared over: W0^T x (W = W0 fixed) or x (W = I, or W trained)."""
    return {"init": "init"}.get(registry.model(model_name).options.get("W"), "raw")


def track_batch(model_name: str, runs: list[dict], steps: int, log_points: int) -> pd.DataFrame:
    """Train the runs (one batch: the same d and seed) for ``steps`` steps, recording the
    alignment at ``log_points`` log-spaced steps (and at 0 and ``steps``)."""
    r0 = runs[0]
    batch = models.build(
        model_name, n=r0["n"], T=r0["T"], d=r0["d"], sigma=r0["sigma"], n_test=r0["n_test"], seed=r0["seed"],
        signal_norms=[r["signal_norm"] for r in runs], rhos=[r["rho"] for r in runs],
        etas=[r["eta"] for r in runs], lrs=[r["lr"] for r in runs],
    )  # fmt: skip
    keys = keys_of(model_name)
    gram = batch.key_gram(keys).numpy()  # fixed: the keys do not train
    noisy = batch.noisy.numpy()
    y = batch.y.numpy()  # the labels trained on
    score_of_token = batch.r.view(batch.B, batch.n, batch.T).numpy()  # <x_t, nu>
    previous = [None] * len(runs)
    solved: list[dict] = [{} for _ in runs]  # per run, p^mm of each selection met (the keys do not train)
    baselines = [_baselines(gram[b], batch.n, batch.T, run) for b, run in enumerate(runs)]
    rows = []
    start = time.perf_counter()
    schedule = log_steps(steps, points=log_points)
    logged, shown = set(schedule), set(schedule[:: max(1, len(schedule) // 8)])
    for step in range(steps + 1):
        if step in logged:
            rows += _record(batch, runs, step, gram, noisy, y, score_of_token, previous, solved, keys, baselines)
            if step in shown and step:
                log.info("%s d=%d seed=%d: step %d/%d, %.1fs", model_name, r0["d"], r0["seed"], step, steps,
                         time.perf_counter() - start)  # fmt: skip
        if step < steps:
            batch.step()
    return pd.DataFrame(rows, columns=COLUMNS).assign(wall_time_s=time.perf_counter() - start)


def _baselines(gram: np.ndarray, n: int, T: int, run: dict) -> dict:
    """What a cosine with p^mm is compared with: the SVM direction of a random selection (seeded
    by the run), and the relevant tokens' mean key direction, as (coefficients over the keys,
    norm); the early selection's is added at the first logged step after 0."""
    rng = np.random.default_rng([int(run["seed"]), int(round(1000 * run["signal_norm"])), 7])
    c_rand, alpha_rand = svm_direction_from_gram(gram, T, rng.integers(0, T, n))
    c_rel = np.zeros(n * T)
    c_rel[np.arange(n) * T + SIGNAL] = 1.0 / n
    return {
        "random": (c_rand, float(np.sqrt(alpha_rand.sum()))),
        "relevant": (c_rel, float(np.sqrt(c_rel @ gram @ c_rel))),
    }


def test_errors(batch, directions: np.ndarray, keys: str) -> dict[str, np.ndarray]:
    """Per run (B,), on the test set: the hard-max readout's error of the trained state, that of
    the SVM directions ``directions`` (B, N; p^mm = K^T c over the keys ``keys``), the long-time
    error where the direction converges to p^mm, and the share of test samples whose most-attended
    token the two agree on. For the paper's model, whose W trains, the keys move with W and p^mm
    over fixed keys is not the limit: the SVM's two are NaN there."""
    _, att = batch.outputs_test(attention=True)
    values = batch.head_values("test")
    own = hardmax_error(att, values, batch.y_test)
    if batch.train_W:  # W trains: the keys move, and p^mm over fixed keys is not the run's limit
        none = np.full(batch.B, np.nan)
        return {"test_err_hardmax": own, "test_err_svm": none, "test_svm_agreement": none}
    c = torch.as_tensor(directions, dtype=batch.c.dtype, device=batch.c.device)
    zero = torch.zeros_like(c)
    svm = batch.test_scores(c, zero) if keys == "init" else batch.test_scores(zero, c)  # W0^T x keys, or x
    agree = (att.argmax(-1) == svm.argmax(-1)).double().mean(-1)
    return {"test_err_hardmax": own,
            "test_err_svm": hardmax_error(svm, values, batch.y_test), "test_svm_agreement": agree.cpu().numpy()}  # fmt: skip


def _record(batch, runs, step, gram, noisy, y, score_of_token, previous, solved, keys, baselines) -> list[dict]:
    s = batch.scores().numpy()  # (B, n, T)
    selections = [selection(s[b]) for b in range(len(runs))]
    for b, a in enumerate(selections):
        if tuple(a) not in solved[b]:
            solved[b][tuple(a)] = svm_direction_from_gram(gram[b], batch.T, a)
    limits = test_errors(batch, np.stack([solved[b][tuple(a)][0] for b, a in enumerate(selections)]), keys)
    f, _ = batch.outputs_train()
    loss = F.softplus(-batch.y * f).mean(-1).tolist()
    if keys == "init":  # the direction p = K^T c: ||p||^2 = c^T G c
        norms = np.sqrt(np.einsum("bi,bij,bj->b", batch.c.numpy(), gram, batch.c.numpy()))
    else:
        norms = batch.query_norm().numpy()
    out = []
    for b, run in enumerate(runs):
        a = selections[b]
        row = dict({k: run.get(k) for k in spec.COLUMNS}, step=step, train_loss=loss[b], direction_norm=float(norms[b]))
        row.update({name: float(values[b]) for name, values in limits.items()})
        row.update(_svm_numbers(s[b], a, *solved[b][tuple(a)], float(norms[b])))
        if step > 0 and "early" not in baselines[b]:  # the selection gradient descent first makes
            c_early, alpha_early = solved[b][tuple(a)]
            baselines[b]["early"] = (c_early, float(np.sqrt(alpha_early.sum())))
        for name in ("random", "early", "relevant"):
            c_base, base_norm = baselines[b].get(name, (None, 0.0))
            row[f"cosine_{name}"] = (
                float(s[b].reshape(-1) @ c_base) / (norms[b] * base_norm)
                if c_base is not None and norms[b] > 0
                else np.nan
            )
        row["locally_optimal"] = locally_optimal(y[b][:, None] * score_of_token[b], a, solved[b][tuple(a)][1], batch.T)
        margins = margins_from_scores(s[b], a)
        clean, flipped = ~noisy[b], noisy[b]
        agrees = np.sign(score_of_token[b, np.arange(len(a)), a]) == np.sign(y[b])
        row.update(
            min_margin_clean=float(margins[clean].min()) if clean.any() else np.nan,
            min_margin_noisy=float(margins[flipped].min()) if flipped.any() else np.nan,
            selection_changed=previous[b] is not None and bool((previous[b] != a).any()),
            clean_signal=_fraction(a[clean] == SIGNAL),
            noisy_signal=_fraction(a[flipped] == SIGNAL),
            noisy_opposite=_fraction(a[flipped] == WEAK_OPPOSITE),
            noisy_noise=_fraction(a[flipped] > WEAK_OPPOSITE),
            noisy_agrees=_fraction(agrees[flipped]),
        )
        previous[b] = a
        out.append(row)
    return out


def _svm_numbers(scores: np.ndarray, a: np.ndarray, c_mm: np.ndarray, alpha: np.ndarray, norm: float) -> dict:
    """cos(direction, p^mm(a)), ||p^mm|| and the margin ratio. With p^mm = K^T c_mm and K v = s
    (the scores), <v, p^mm> = s . c_mm: only the scores and the keys' Gram are needed."""
    if norm == 0:
        return dict(svm_norm=np.nan, cosine=np.nan, margin_ratio=np.nan)
    svm_norm = float(np.sqrt(alpha.sum()))  # ||p^mm||^2 = 1^T alpha
    cosine = float(scores.reshape(-1) @ c_mm) / (norm * svm_norm)
    return dict(
        svm_norm=svm_norm, cosine=cosine, margin_ratio=float(margins_from_scores(scores, a).min()) / norm * svm_norm
    )


def _fraction(mask: np.ndarray) -> float:
    return float(mask.mean()) if mask.size else np.nan


def track(model_name: str, runs: list[dict], log_points: int) -> pd.DataFrame:
    """Every run, batched by (d, seed, steps): the alignment frame (``COLUMNS``)."""
    groups: dict[tuple, list[dict]] = {}
    for run in runs:
        groups.setdefault((run["d"], run["seed"], run["steps"]), []).append(run)
    frames = [track_batch(model_name, group, key[2], log_points) for key, group in groups.items()]
    return pd.concat(frames, ignore_index=True).assign(peak_rss_mb=peak_memory_mb("cpu")[0])
