"""Many phase-2 runs trained as one program (docs/real_protocol.md#phase-2-many-runs-at-once).

Runs that share a data set, a backbone and n (any seeds and noise rates) take the same number
of optimiser steps, so their query and key parameters are stacked along a leading run axis
and trained together through :meth:`FinalBlock.forward_groups`. Each run keeps what the
one-run path (``benign.real.reference.finetune_query_key``) gives it: its own fine-tuning rows,
noisy labels, head, query/key initialisation and batch order, its loss as the mean over its
own batch, gradient clipping by its own norm, and its own AdamW state (AdamW is elementwise,
so stacking does not mix runs).

The runs of one training set (one seed: the same rows in the same order, whatever eta) read
the same samples at every step, so they form one group whose query/key pairs act as extra
heads over the same tokens: the products over tokens get E times more rows instead of being
E separate small products. That, not the saved per-step overhead, is what the batching buys
on a CPU.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from benign.core.io import atomic_path
from benign.core.stopping import STOP, Stopped
from benign.real.backbones import reinit_linear
from benign.real.final_layer import FinalBlock, Group, Head
from benign.real.heads import clip_per_run, stacked_logits
from benign.real.loop import Epoch, TrainConfig
from benign.real.records import Record, split_accuracy

log = logging.getLogger("benign.real")


@dataclass
class TrainSet:
    """One seed's fine-tuning rows: the final-layer inputs (n, T, d), mask (n, T) or None, and
    the generator of its batch order ("real_finetune_shuffle" of its seed), which every run
    on the set follows."""

    hidden: torch.Tensor
    mask: torch.Tensor | None
    shuffle: torch.Generator


@dataclass
class Run:
    """One phase-2 run of a batch: which training set it reads, its noisy labels (n,), its
    phase-1 head, the generator of its query/key initialisation ("real_qk_init" of its seed),
    and which of its rows have a flipped label (n,) (None: none)."""

    train_set: int
    labels: torch.Tensor
    head: Head
    init: torch.Generator
    noisy: torch.Tensor | None = None


@dataclass
class RunResult:
    history: list[Epoch]
    train_loss: float  # evaluated after training, against the noisy labels
    train_acc: float
    test_loss: float
    test_acc: float
    records: list[Record]


class Heads:
    """The runs' frozen phase-1 heads, stacked (``heads.stacked_logits``): pooler (BERT) then classifier."""

    def __init__(self, heads: Sequence[Head]):
        self.params = {k: torch.stack([h.state_dict()[k] for h in heads]).detach() for k in heads[0].state_dict()}

    def __call__(self, features: torch.Tensor) -> torch.Tensor:
        """(R, B, d) -> logits (R, B, C)."""
        return stacked_logits(self.params, features)


def _initial_query_key(block: FinalBlock, runs: Sequence[Run]) -> list[torch.Tensor | None]:
    """Stacked (query weight, query bias or none, key weight), each run drawn as the one-run path
    draws it: query then key, PyTorch's default Linear initialisation, from the run's generator."""
    d = block.cfg.hidden_size
    weights_q, biases_q, weights_k = [], [], []
    for run in runs:
        query = nn.Linear(d, d, bias=block.query.bias is not None, dtype=block.query.weight.dtype)
        key = nn.Linear(d, d, bias=block.key.bias is not None, dtype=block.key.weight.dtype)
        reinit_linear(query, run.init)
        reinit_linear(key, run.init)  # its bias is drawn too (the stream matches) and never used
        weights_q.append(query.weight.detach())
        biases_q.append(query.bias.detach() if query.bias is not None else None)
        weights_k.append(key.weight.detach())
    device = block.query.weight.device
    out = [torch.stack(weights_q).to(device)]
    out.append(torch.stack(biases_q).to(device) if biases_q[0] is not None else None)
    out.append(torch.stack(weights_k).to(device))
    return [p.requires_grad_(True) if p is not None else None for p in out]


class Program:
    """The stacked runs, ordered set by set: each set's runs are one contiguous slice
    (``slices[set] = (lo, hi)``) of the stacked parameters, heads and labels."""

    def __init__(self, block: FinalBlock, runs: Sequence[Run]):
        self.block = block
        self.order = sorted(range(len(runs)), key=lambda r: runs[r].train_set)  # stable: a set's runs keep their order
        ordered = [runs[r] for r in self.order]
        self.slices: dict[int, tuple[int, int]] = {}
        for i, run in enumerate(ordered):
            self.slices[run.train_set] = (self.slices.get(run.train_set, (i, i))[0], i + 1)
        self.heads = Heads([run.head for run in ordered])
        # per set its own leaves (query weight, query bias or None, key weight): slicing one
        # stacked leaf would make every step's backward fill a full-size zero gradient per set
        self.params = {s: _initial_query_key(block, ordered[lo:hi]) for s, (lo, hi) in self.slices.items()}
        self.labels = torch.stack([run.labels for run in ordered]).to(block.query.weight.device)  # (R, n)
        self.noisy = torch.stack(
            [run.noisy if run.noisy is not None else torch.zeros_like(run.labels, dtype=torch.bool) for run in ordered]
        ).cpu()  # (R, n)

    def forward(self, inputs: dict, rows: dict[int, torch.Tensor], slices: dict | None = None):
        """``inputs[s]``: a set's (tokens (n, T, d), x0 (n, d), values (n, T, d), mask or None); ``rows[s]`` (B,):
        the samples its runs ``slices[s]`` read -> logits (R, B, C), and per run the batch's sum
        over samples of the mean over heads of the max attention from position 0 (R,)."""
        groups = []
        for s, (lo, hi) in (slices or self.slices).items():
            *frozen, mask = inputs[s]
            picked = rows[s]
            wq, bq, wk = self.params[s] if slices is None else self.stacked(lo, hi)
            mask = mask.index_select(0, picked) if mask is not None else None
            groups.append(Group(*(t.index_select(0, picked) for t in frozen), mask, wq, bq, wk))
        out, attention = self.block.forward_groups(groups)
        focus = torch.cat([a.detach().amax(-1).mean(-1).sum(1) for a in attention])
        return self.heads(out), focus

    def stacked(self, lo: int, hi: int) -> list[torch.Tensor | None]:
        """Runs lo..hi-1 (the program's order) of every set, as one group's parameters."""
        parts = list(zip(*self.params.values()))
        whole = [torch.cat(p) if p[0] is not None else None for p in parts]
        return [w[lo:hi] if w is not None else None for w in whole]

    def trained(self) -> list[torch.Tensor]:
        return [p for params in self.params.values() for p in params if p is not None]

    def targets(self, labels: torch.Tensor, rows: dict[int, torch.Tensor], slices: dict | None = None):
        """(R, B): each run's ``labels`` (R, n) at the rows its set reads."""
        picked = torch.cat([rows[s].expand(hi - lo, -1) for s, (lo, hi) in (slices or self.slices).items()])
        return labels.gather(1, picked)

    def in_input_order(self, values: Sequence) -> list:
        out = [None] * len(values)
        for i, r in enumerate(self.order):
            out[r] = values[i]
        return out


def _clip_per_run(program: Program, max_norm: float) -> None:
    """torch.nn.utils.clip_grad_norm_ applied to each run's gradients on their own."""
    for params in program.params.values():
        clip_per_run([p for p in params if p is not None], max_norm)


def finetune_runs(
    block: FinalBlock,
    runs: Sequence[Run],
    sets: Sequence[TrainSet],
    test_chunks: Iterable[tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]],
    cfg: TrainConfig,
    name: str = "phase 2",
    checkpoint: Path | None = None,
    checkpoint_every: int = 0,
    identity: str = "",
    record_at: Sequence[int] = (),
    hold_test: bool = False,
) -> list[RunResult]:
    """Phase 2 for every run at once; every set has the same n. ``test_chunks``: the test set,
    shared by every run, as (inputs (N, T, d), mask or None, labels (N,)) chunks read one at a
    time (``FeatureCache.test_chunks``); each chunk but the last a multiple of 256 rows, so the
    sums run over the same batches as one chunk would; it is read once per epoch of
    ``record_at`` (0: before the first step), where every run records its test metrics and its
    training accuracy on clean and noisy rows (``benign.real.records``), and once at the end;
    with ``hold_test``, read and prepared once and kept (:class:`TestInputs`). Results come in
    the order of ``runs``.

    With ``checkpoint``, the state at the end of an epoch (query/key, AdamW moments, the
    schedule, the shuffles' generators, the curves so far) is saved every ``checkpoint_every``
    epochs, when a signal of ``benign.core.stopping.stop_on_signals`` arrives (then the job exits
    75) and after the last epoch; a call that finds a checkpoint of the same ``identity``
    resumes from it, with the numbers an uninterrupted call gives (after the last epoch: no
    training at all)."""
    n = _common_n(sets)
    with torch.no_grad():  # the frozen pre-norm and values, once per set
        inputs = {i: (*block.tokens(s.hidden), s.mask) for i, s in enumerate(sets)}
    program = Program(block, runs)
    test_chunks = TestInputs(block, test_chunks, hold_test)
    trained = program.trained()
    optimiser, schedule = _optimiser(trained, cfg, n)
    histories: list[list[Epoch]] = [[] for _ in runs]
    records: list[list[Record]] = [[] for _ in runs]
    state = (trained, optimiser, schedule, sets, histories, records)  # what a checkpoint holds

    first = 1
    if checkpoint is not None and Path(checkpoint).exists():
        first = _resume(Path(checkpoint), identity, *state)
    if first == 1 and 0 in record_at:
        _record_into(records, program, inputs, test_chunks, 0)
    start = time.perf_counter()
    for epoch in range(first, cfg.epochs + 1):
        losses, accs, focus = _train_epoch(program, inputs, sets, optimiser, schedule, cfg)
        for i, r in enumerate(program.order):
            histories[r].append(Epoch(epoch, losses[i], accs[i], focus[i]))
        if epoch in record_at:
            _record_into(records, program, inputs, test_chunks, epoch)
        if epoch % cfg.log_every == 0 or epoch == cfg.epochs:
            _log_epoch(name, epoch, cfg.epochs, program.in_input_order(losses), start)
        if checkpoint is not None and epoch < cfg.epochs:
            _save_or_stop(Path(checkpoint), identity, epoch, checkpoint_every, state)
    if checkpoint is not None and first <= cfg.epochs:
        # The finished state stays (benign.core.job_state): a retry of a job ruled failed after
        # its last epoch resumes here and trains nothing.
        _save(Path(checkpoint), identity, cfg.epochs, *state)
    return _results(program, inputs, test_chunks, histories, records)


def _record_into(records: list[list[Record]], program: Program, inputs: dict, test_chunks, epoch: int) -> None:
    """Every run's record of ``epoch`` (:func:`_record`), appended to its list, in input order."""
    for i, rec in enumerate(_record(program, inputs, test_chunks, epoch)):
        records[program.order[i]].append(rec)


def _optimiser(trained: list[torch.Tensor], cfg: TrainConfig, n: int):
    """AdamW (no weight decay) with the learning rate falling linearly to 0 over phase 2's steps."""
    steps = cfg.epochs * math.ceil(n / cfg.batch_size)
    optimiser = torch.optim.AdamW(trained, lr=cfg.lr, weight_decay=0.0, fused=True)
    return optimiser, torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: max(0.0, (steps - step) / steps))


def _log_epoch(name: str, epoch: int, epochs: int, losses: Sequence[float], start: float) -> None:
    """A progress line: every run's loss, in the order of the runs given."""
    shown = " ".join(f"{loss:.4f}" for loss in losses)
    log.info("%s: epoch %d/%d loss per run %s elapsed %.1fs", name, epoch, epochs, shown, time.perf_counter() - start)


def _common_n(sets: Sequence[TrainSet]) -> int:
    """The training sets' n, which one program needs to be the same for every set."""
    n = sets[0].hidden.shape[0]
    if any(s.hidden.shape[0] != n for s in sets):
        raise ValueError(
            f"the training sets of one program must have the same n, not {[s.hidden.shape[0] for s in sets]}"
        )
    return n


def _train_epoch(program: Program, inputs: dict, sets, optimiser, schedule, cfg: TrainConfig):
    """One epoch of every run: each set's rows shuffled by its own generator, one AdamW step per
    batch on the sum of the runs' losses (each run's gradient is its own loss's), clipped per run.
    Returns the program's (mean losses, training accuracies, mean max attentions), one per run."""
    n, R, device = next(iter(inputs.values()))[0].shape[0], len(program.order), program.labels.device
    loss_sum, correct, attention_sum = (torch.zeros(R, device=device) for _ in range(3))
    orders = {s: torch.randperm(n, generator=sets[s].shuffle).to(device) for s in program.slices}
    num_batches = math.ceil(n / cfg.batch_size)
    for b in range(num_batches):
        rows = {s: order[b * cfg.batch_size : (b + 1) * cfg.batch_size] for s, order in orders.items()}
        logits, focus = program.forward(inputs, rows)
        target = program.targets(program.labels, rows)
        loss = F.cross_entropy(logits.flatten(0, 1), target.flatten(), reduction="none").view(R, -1).mean(1)
        optimiser.zero_grad(set_to_none=True)
        loss.sum().backward()
        _clip_per_run(program, cfg.clip)
        optimiser.step()
        schedule.step()
        loss_sum += loss.detach()
        correct += (logits.detach().argmax(-1) == target).sum(1)
        attention_sum += focus
    # divided as Python floats, as the one-run path does
    losses = [v / num_batches for v in loss_sum.tolist()]
    return losses, [v / n for v in correct.tolist()], [v / n for v in attention_sum.tolist()]


def _save_or_stop(checkpoint: Path, identity: str, epoch: int, every: int, state: tuple) -> None:
    """Save the state every ``every`` epochs and on a stop signal; on a signal, stop the job."""
    if STOP.signal is not None or (every > 0 and epoch % every == 0):
        _save(checkpoint, identity, epoch, *state)
    if STOP.signal is not None:
        raise Stopped(STOP.signal, f"epoch {epoch}", checkpoint)


def _results(program: Program, inputs: dict, test_chunks, histories, records) -> list[RunResult]:
    """Every run's result in the order of its input: its history and records, and its final
    training and test metrics with the query and key frozen."""
    n = next(iter(inputs.values()))[0].shape[0]
    for p in program.trained():
        p.requires_grad_(False)
    loss, hits = _sums(program, inputs, program.labels, program.slices)
    train_eval = program.in_input_order(_means(loss, hits.sum(1), n))
    test_eval = program.in_input_order(_test(program, test_chunks))
    return [RunResult(histories[r], *train_eval[r], *test_eval[r], records[r]) for r in range(len(histories))]


def _test(program: Program, test_chunks) -> list[tuple[float, float]]:
    """Per run, in the program's order: (mean test cross-entropy, test accuracy); every run reads the whole test set."""
    R, device = program.labels.shape[0], program.labels.device
    loss = torch.zeros(R, dtype=torch.float64, device=device)
    correct = torch.zeros(R, device=device)
    total = 0
    for *test_inputs, y_test in test_chunks:
        chunk_loss, chunk_hits = _sums(program, {0: tuple(test_inputs)}, y_test.expand(R, -1), {0: (0, R)})
        loss, correct, total = loss + chunk_loss, correct + chunk_hits.sum(1), total + len(y_test)
    return _means(loss, correct, total)


class TestInputs:
    """The test split as the evaluation reads it: per chunk (pre-norm tokens, x0, values, mask or
    None, labels) on the block's device. The layer's value projection is frozen, so a chunk's
    values are the same at every recorded epoch: with ``hold``, every chunk is prepared once and
    kept (the plan counts the memory: ``benign.real.sizes.held_test``); without, each reading
    reads and prepares the chunks again, one in memory at a time. Either way the same numbers."""

    def __init__(self, block: FinalBlock, chunks: Iterable, hold: bool):
        self.block, self.chunks, self.hold, self.held = block, chunks, hold, None

    def __iter__(self):
        if self.held is not None:
            yield from self.held
            return
        device, prepared = self.block.query.weight.device, []
        for hidden, mask, y in self.chunks:
            with torch.no_grad():
                chunk = (*self.block.tokens(hidden.to(device)), _to(mask, device), y.to(device))
            if self.hold:
                prepared.append(chunk)
            yield chunk
        if self.hold:
            self.held = prepared


def _record(program: Program, inputs: dict, test_chunks, epoch: int) -> list[Record]:
    """Every run's record (``benign.real.records.Record``) at the end of ``epoch``, in the program's order."""
    _, hits = _sums(program, inputs, program.labels, program.slices)
    hits = hits.cpu().numpy()
    test = _test(program, test_chunks)
    return [Record(epoch, *test[i], *split_accuracy(hits[i], program.noisy[i].numpy())) for i in range(len(test))]


def _save(path: Path, identity: str, epoch: int, trained, optimiser, schedule, sets, histories, records) -> None:
    """Phase 2's state after ``epoch``, tensors and plain values only (loaded with
    ``weights_only=True``: a file on shared scratch is data, never code)."""
    state = dict(
        identity=identity,
        epoch=int(epoch),
        params=[p.detach().clone() for p in trained],
        optimiser=optimiser.state_dict(),
        schedule=schedule.state_dict(),
        shuffles=[s.shuffle.get_state() for s in sets],
        curves=torch.tensor([[[e.loss, e.acc, e.max_attention] for e in h] for h in histories], dtype=torch.float64),
        records=torch.tensor([[[r.epoch, *r.values()] for r in rs] for rs in records], dtype=torch.float64),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def _resume(path: Path, identity: str, trained, optimiser, schedule, sets, histories, records) -> int:
    """Restore the state :func:`_save` wrote; the first epoch still to train (1: none usable,
    with a warning naming the file). Every part is read and checked before any is applied, so a
    refused checkpoint leaves the fresh state untouched."""
    try:
        state = torch.load(path, map_location=trained[0].device, weights_only=True)
        if state["identity"] != identity:
            raise ValueError(f"it is of {state['identity']!r}, not {identity!r}")
        params = list(state["params"])
        if [p.shape for p in params] != [p.shape for p in trained]:
            raise ValueError("its parameters have other shapes")
        curves = [[Epoch(k + 1, *values) for k, values in enumerate(c)] for c in state["curves"].tolist()]
        kept = [[Record(int(epoch), *values) for epoch, *values in saved] for saved in state["records"].tolist()]
        shuffles, epoch = list(state["shuffles"]), int(state["epoch"])
        if (len(curves), len(kept), len(shuffles)) != (len(histories), len(records), len(sets)):
            raise ValueError("it holds another number of runs or training sets")
        optimiser.load_state_dict(state["optimiser"])
        schedule.load_state_dict(state["schedule"])
    except Exception as err:  # pickle.UnpicklingError for code; KeyError, ValueError for other layouts
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        log.warning("refusing checkpoint %s (%s); phase 2 starts again", path, reason)
        return 1
    with torch.no_grad():
        for p, saved in zip(trained, params, strict=True):
            p.copy_(saved)
    for s, generator_state in zip(sets, shuffles, strict=True):
        s.shuffle.set_state(generator_state)
    for history, curve in zip(histories, curves, strict=True):
        history.extend(curve)
    for mine, saved in zip(records, kept, strict=True):
        mine.extend(saved)
    log.info("resumed phase 2 from its checkpoint %s after epoch %d", path, epoch)
    return epoch + 1


def _to(t: torch.Tensor | None, device) -> torch.Tensor | None:
    return t.to(device) if t is not None else None


@torch.no_grad()
def _sums(program: Program, inputs: dict, labels: torch.Tensor, slices: dict, batch_size: int = 256):
    """Per run, in the program's order: (summed cross-entropy (R,), per-row hits (R, n)) over the rows of its set."""
    R, n = labels.shape
    loss = torch.zeros(R, dtype=torch.float64, device=labels.device)  # as the one-run path's Python floats
    hits = []
    for batch in torch.arange(n, device=labels.device).split(batch_size):
        rows = dict.fromkeys(slices, batch)
        logits, _ = program.forward(inputs, rows, slices)
        target = program.targets(labels, rows, slices)
        loss += F.cross_entropy(logits.flatten(0, 1), target.flatten(), reduction="none").view(R, -1).sum(1)
        hits.append(logits.argmax(-1) == target)
    return loss, torch.cat(hits, dim=1)


def _means(loss: torch.Tensor, correct: torch.Tensor, n: int) -> list[tuple[float, float]]:
    """Per run: (mean cross-entropy, accuracy)."""
    return [(loss[r].item() / n, correct[r].item() / n) for r in range(len(loss))]
