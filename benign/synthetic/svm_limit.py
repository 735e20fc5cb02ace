"""The long-time limit of the token model's attention with W fixed at W0, computed rather than
waited for (docs/regimes.md#the-limit).

With W and the head fixed, gradient descent on p drives ||p|| to infinity and p / ||p|| to the
attention-SVM direction p^mm of the tokens the training samples select (Tarzanagh, Li, Zhang and
Oymak 2023; benign.synthetic.max_margin solves it from the keys' Gram matrix). The softmax then
saturates: a test sample attends to argmax_t <W0^T x_t, p^mm> alone. So a run's labels at
t = infinity need its selection, not its trajectory. The selection here is the global one: each
training sample's token of highest head score Y_i <x_it, nu> (Y_i the label trained on, flipped
or not), the selection whose loss is least, which needs no run. Whether gradient descent reaches
it is read from the runs: the share of each kind of token the selection picks is compared with
what the atlas's runs select at their last horizon (benign.analysis.limit).

The keys are W0^T x: the limit of an atlas run's W-frozen twin (the same data, the same W0 and
test set: benign.synthetic.gram names its draws by seed, d, n and T). The atlas trains W too; its
limit is not this one (docs/regimes.md#the-limit says what the W-frozen control licenses).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import torch

from benign.synthetic import flow, limit_schema, models, spec
from benign.synthetic.max_margin import locally_optimal, svm_direction_from_gram
from benign.synthetic.selection import hardmax_error

TRAINING = ("lr", "flow_tol")  # how a line's W-frozen twin is trained to the horizon (the atlas's runs')
DRAW = {f.name for f in dataclasses.fields(spec.DataSpec)} | {"engine"}  # a run's data, and what draws it
TRAINING_KEYS = tuple(k for k in spec.BATCH_KEYS if k not in DRAW)  # a batch's keys that are not its draw
# what a line's draw is named by: what a batch shares, and the data's rho and eta, less how it trains
LINE = tuple(k for k in spec.COLUMNS if k in {*spec.BATCH_KEYS, "rho", "eta"} - {*TRAINING_KEYS})
SELECTIONS = ("run", "global")  # the twin's selection at the horizon; each sample's token of highest score
RELEVANT, WEAK_TRUE, WEAK_OPPOSITE = 0, 1, 2  # token indices: mu_y, rho mu_y, rho mu_{-y}
KINDS = limit_schema.KINDS
COLUMNS = limit_schema.LIMIT.names


def global_selection(y: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each sample's token of highest head score y_i <x_it, nu>: (n,) from labels (n,) and head
    values (n, T)."""
    return np.argmax(np.asarray(y)[:, None] * np.asarray(values), axis=1)


def _kind_shares(a: np.ndarray, mask: np.ndarray) -> list[float]:
    """The shares of the samples in ``mask`` whose selected token is of each kind (NaN: none)."""
    if not mask.any():
        return [math.nan] * len(KINDS)
    picked = a[mask]
    return [float(np.mean(picked == RELEVANT)), float(np.mean(picked == WEAK_TRUE)),
            float(np.mean(picked == WEAK_OPPOSITE)), float(np.mean(picked > WEAK_OPPOSITE))]  # fmt: skip


def train_twin(batch, horizon: int, tol: float, clock: flow.Clock | None = None) -> flow.Clock:
    """The W-frozen twins of one line (``batch``: token_p_w0 runs) trained by the gradient flow
    (benign.synthetic.flow) to time ``horizon`` (from ``clock``, or from time 0), as the atlas
    trains its runs; the clock where it stopped."""
    clock = clock or flow.Clock()
    scores = batch.scores()
    while clock.time < horizon:
        scores = flow.advance(batch, clock, tol, scores)
    return clock


def limit_runs(line: dict, norms, horizon: int, refined: bool = False) -> pd.DataFrame:
    """The limit at each of ``norms`` on one line (``line``: the keys of :data:`LINE` and
    :data:`TRAINING`), two rows per norm (:data:`COLUMNS`), one per selection of
    :data:`SELECTIONS`: the W-frozen twin's at ``horizon`` steps and the global one. Each row:
    whether the selection is separable, ||p^mm||, the saturated softmax's test error of the
    hard-max readout and test share attending to the relevant token, the kinds of token the
    selection picks on the clean and the flipped samples, the share of samples on which it differs
    from the global one, the share whose selection is locally optimal (Tarzanagh et al.'s
    condition), the share of the twin's selection that changed in the last decade of time before
    the horizon, the cosine of the twin's p at the horizon with p^mm, and the twin's own hard-max
    test error and test share attending to the relevant token there (its plateau)."""
    norms = [float(m) for m in norms]
    B = len(norms)
    batch = models.build(
        "token_p_w0", n=int(line["n"]), T=int(line["T"]), d=int(line["d"]), sigma=float(line["sigma"]),
        n_test=int(line["n_test"]), seed=int(line["seed"]), signal_norms=norms, rhos=[float(line["rho"])] * B,
        etas=[float(line["eta"])] * B, lrs=[float(line["lr"])] * B, engine=str(line["engine"]),
    )  # fmt: skip
    gram = batch.key_gram("init").numpy()
    y, values, noisy = batch.y.numpy(), batch.head_values("train").numpy(), batch.noisy.numpy()
    clock = train_twin(batch, max(1, horizon // 10), float(line["flow_tol"]))
    earlier = batch.scores().numpy().argmax(-1)  # the selection a decade of time before the horizon
    train_twin(batch, horizon, float(line["flow_tol"]), clock)
    _, att = batch.outputs_test(attention=True)
    trained_err = hardmax_error(att, batch.head_values("test"), batch.y_test)
    trained_rate = (att.argmax(-1) == RELEVANT).double().mean(-1).numpy()
    held, c_run = batch.scores().numpy().argmax(-1), batch.c.numpy()
    frames, solved = [], {}
    for name in SELECTIONS:
        directions, rows = np.zeros((B, batch.n * batch.T)), []
        for b in range(B):
            best = global_selection(y[b], values[b])
            a = held[b] if name == "run" else best
            feasible, norm, cosine, key = False, math.nan, math.nan, None
            try:
                key = (b, tuple(a))
                if key not in solved:  # the two selections are often the same: one solve
                    solved[key] = svm_direction_from_gram(gram[b], batch.T, a)
                c, alpha = solved[key]
                directions[b], feasible, norm = c, True, float(np.sqrt(alpha.sum()))
                p_norm = float(np.sqrt(c_run[b] @ gram[b] @ c_run[b]))
                cosine = float(c_run[b] @ gram[b] @ c) / (p_norm * norm) if p_norm > 0 else math.nan
            except ValueError:  # no p separates the selection: no limit of this form
                pass
            optimal = locally_optimal(y[b][:, None] * values[b], a, solved[key][1], batch.T) if feasible else math.nan
            rows.append({**{k: line[k] for k in LINE}, "signal_norm": norms[b], "selection": name, "refined": refined,
                         "feasible": feasible, "svm_norm": norm, "clean_sel_relevant": _kind_shares(a, ~noisy[b])[0],
                         **dict(zip([f"noisy_sel_{k}" for k in KINDS], _kind_shares(a, noisy[b]))),
                         "differs": float(np.mean(a != best)), "locally_optimal": optimal,
                         "changed": float(np.mean(earlier[b] != held[b])), "cosine": cosine,
                         "test_err_trained": float(trained_err[b]), "test_sel_trained": float(trained_rate[b])})  # fmt: skip
        c = torch.as_tensor(directions, dtype=batch.c.dtype)
        scores = batch.test_scores(c, torch.zeros_like(c))
        frame = pd.DataFrame(rows).assign(
            test_err_hardmax=hardmax_error(scores, batch.head_values("test"), batch.y_test),
            test_sel_relevant=(scores.argmax(-1) == RELEVANT).double().mean(-1).numpy(),
        )
        frame.loc[~frame["feasible"], ["test_err_hardmax", "test_sel_relevant"]] = math.nan
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def _changes(frame: pd.DataFrame, sides, resolution: float, parts: int = 4) -> np.ndarray:
    """The norms that split, into ``parts`` equal factors (fewer where fewer reach ``resolution``),
    every pair of neighbouring norms wider apart than ``resolution`` between which a label of
    ``sides`` changes under some selection."""
    out = []
    for _, one in frame.groupby("selection"):
        one = one.sort_values("signal_norm")
        labels = sides(one).to_numpy(bool)
        m = one["signal_norm"].to_numpy(float)
        for i in np.flatnonzero((labels[1:] != labels[:-1]).any(axis=1)):
            width = math.log(m[i + 1] / m[i])
            if width > math.log(resolution) * (1 + 1e-3):  # the config rounds its resolution (2^(1/8) as 1.0905)
                k = min(parts, math.ceil(width / math.log(resolution) - 1e-3))
                out += [m[i] * math.exp(width * j / k) for j in range(1, k)]
    return np.unique(np.round(out, 9))


def refine(frame: pd.DataFrame, line: dict, sides: Callable[[pd.DataFrame], pd.DataFrame], resolution: float,
           horizon: int, rounds: int = 8) -> pd.DataFrame:  # fmt: skip
    """``frame`` (:func:`limit_runs`' rows of one line) with the limit added at the geometric
    norms splitting every pair of neighbouring norms between which a label of ``sides`` (a frame of
    booleans, one column per label) changes (:func:`_changes`), until every such pair lies within
    a factor ``resolution`` (at most ``rounds`` times): each crossing resolved as finely as the atlas's
    staggered seeds resolve the trained one."""
    for _ in range(rounds):
        new = _changes(frame, sides, resolution)
        if not len(new):
            break
        frame = pd.concat([frame, limit_runs(line, new, horizon, refined=True)], ignore_index=True)
    return frame.sort_values(["selection", "signal_norm"], ignore_index=True)


def scan(norms, law: float, factor: float = 2.0, reach: int = 2) -> list[float]:
    """The norms a line's limit is first evaluated at: those of ``norms`` (the line's atlas norms)
    within a factor ``factor``^``reach`` of ``law`` (the first step's crossing at the line), at
    least two."""
    m = np.unique(np.asarray(norms, dtype=float))
    near = m[np.abs(np.log(m / law)) <= reach * math.log(factor) + 1e-9]
    return near.tolist() if len(near) >= 2 else m.tolist()


def widen(frame: pd.DataFrame, line: dict, norms, sides: Callable[[pd.DataFrame], pd.DataFrame],
          horizon: int) -> pd.DataFrame:  # fmt: skip
    """``frame`` with the next of ``norms`` below its least norm added while some label already
    holds there, and the next above its largest while some label does not hold there yet: every
    crossing inside the norms evaluated, as far as ``norms`` reach."""
    norms = np.unique(np.asarray(norms, dtype=float))
    while True:
        lo, hi = frame["signal_norm"].min(), frame["signal_norm"].max()
        low_side = sides(frame[np.isclose(frame["signal_norm"], lo)]).to_numpy(bool)
        high_side = sides(frame[np.isclose(frame["signal_norm"], hi)]).to_numpy(bool)
        below, above = norms[norms < lo * (1 - 1e-9)], norms[norms > hi * (1 + 1e-9)]
        new = [*(below[-1:] if low_side.any() else []), *(above[:1] if not high_side.all() else [])]
        if not new:
            return frame
        frame = pd.concat([frame, limit_runs(line, new, horizon)], ignore_index=True)


def limit_line(line: dict, norms, sides: Callable[[pd.DataFrame], pd.DataFrame], resolution: float, horizon: int,
               law: float) -> pd.DataFrame:  # fmt: skip
    """The limit on one line (``line``: the keys of :data:`LINE` and :data:`TRAINING`): at its
    atlas ``norms`` near the first step's crossing ``law`` (:func:`scan`), widened to hold every
    crossing (:func:`widen`), then refined about them (:func:`refine`)."""
    frame = limit_runs(line, scan(norms, law), horizon)
    return refine(widen(frame, line, norms, sides, horizon), line, sides, resolution, horizon)


def limit_atlas(runs: pd.DataFrame, sides: Callable[[pd.DataFrame], pd.DataFrame], resolution: float, horizon: int,
                law: Callable[[dict], float], progress: Callable[[str], None] = lambda message: None) -> pd.DataFrame:  # fmt: skip
    """The limit on every line of ``runs`` (the atlas's runs: columns of :data:`LINE`,
    :data:`TRAINING` and signal_norm) (:func:`limit_line`; ``law(line)``: the first step's
    crossing there)."""
    frames, groups = [], list(runs.groupby([*LINE, *TRAINING], sort=True))
    for i, (key, line_runs) in enumerate(groups):
        line = dict(zip([*LINE, *TRAINING], key))
        frames.append(limit_line(line, line_runs["signal_norm"], sides, resolution, horizon, law(line)))
        progress(f"line {i + 1}/{len(groups)}: d={line['d']} n={line['n']} seed={line['seed']}, "
                 f"{frames[-1]['signal_norm'].nunique()} norms")  # fmt: skip
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)


def _head_values(data) -> np.ndarray:
    """<x_t, nu> of every training token of every run, (B, n, T): the first two coordinates (the
    signal's, e_1 and e_2) of noise plus signal, over sqrt(2) ||mu|| (as the model's Batch reads them)."""
    first_two = data.noise[None, ..., :2] + data.coef  # (B, n, T, 2)
    return ((first_two[..., 0] - first_two[..., 1]) / (math.sqrt(2) * data.signal_norms[:, None, None])).numpy()


def selection_kinds(runs: pd.DataFrame) -> pd.DataFrame:
    """The global selection's kinds at each run's data (``runs``: run_id, the keys of :data:`LINE`
    and signal_norm): the share of clean samples picking the relevant token and of flipped ones
    picking each kind, as the trainer logs a run's most-attended tokens."""
    rows = []
    for key, line in runs.groupby(list(LINE), sort=True):
        p = dict(zip(LINE, key))
        norms = line["signal_norm"].astype(float).tolist()
        data = models.batch_data(n=int(p["n"]), T=int(p["T"]), d=int(p["d"]), sigma=float(p["sigma"]),
                                 n_test=1, seed=int(p["seed"]), signal_norms=norms, rhos=[float(p["rho"])] * len(norms),
                                 etas=[float(p["eta"])] * len(norms), engine=str(p["engine"]))  # fmt: skip
        y, values = data.y, _head_values(data)
        for b, run_id in enumerate(line["run_id"]):
            a = global_selection(y[b].numpy(), values[b])
            noisy = data.noisy[b].numpy()
            rows.append({"run_id": run_id, "clean_sel_relevant": _kind_shares(a, ~noisy)[0],
                         **dict(zip([f"noisy_sel_{k}" for k in KINDS], _kind_shares(a, noisy)))})  # fmt: skip
    return pd.DataFrame(rows, columns=["run_id", "clean_sel_relevant", *[f"noisy_sel_{k}" for k in KINDS]])
