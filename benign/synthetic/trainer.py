"""Full-batch gradient descent (or its gradient flow, benign.synthetic.flow) for many synthetic
runs at once, with metric recording.

Runs are grouped into batches that share the token noise and initialisation (same model,
n, T, d, sigma, n_test, seed, steps, mlp_dim); each batch is one tensor program. At every
logged step the trainer records train/test loss and accuracy, the training accuracy on
clean and on label-flipped samples separately (each against the labels trained on, so a
flipped sample counts as fitted when the model predicts its flipped label), and, for the
runs that ask for it, the softmax over tokens of every training sample. The models are the
modules listed in ``benign.synthetic.registry.MODELS``, built by :func:`benign.synthetic.models.build`. Regime labels
are not set here: they depend on thresholds of the config, applied when the runs are gathered
(benign.analysis.theory.assign_regimes).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import shutil
import time
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from benign.core.device import peak_memory_mb, pick_device
from benign.core.io import atomic_path
from benign.core.stopping import STOP, Stopped, stop_on_signals  # noqa: F401  (job scripts take stop_on_signals from here)
from benign.synthetic import flow, models, schema, selection, spec
from benign.synthetic.spec import RunSpec  # noqa: F401  (callers take RunSpec from here too)

log = logging.getLogger("benign.synthetic.trainer")


MILESTONES = ("fit_noisy", "fit_all", "generalized")  # columns set when runs are gathered


def log_steps(steps: int, every: int = 0, points: int = 0) -> list[int]:
    """Steps at which metrics are recorded: 0 and ``steps`` always; every ``every`` steps, or
    ``points`` log-spaced steps."""
    s = {0, steps}
    if points > 0:
        s |= {int(round(x)) for x in np.geomspace(1, steps, points)}
    elif every > 0:
        s |= set(range(0, steps + 1, every))
    return sorted(s)


def _batch(specs: list[RunSpec], device: torch.device, dtype: torch.dtype | None):
    s0 = specs[0]
    return models.build(
        s0.model, n=s0.n, T=s0.T, d=s0.d, sigma=s0.sigma, n_test=s0.n_test, seed=s0.seed,
        signal_norms=[s.signal_norm for s in specs], rhos=[s.rho for s in specs], etas=[s.eta for s in specs],
        lrs=[s.lr for s in specs], device=device, dtype=dtype, engine=s0.engine, **s0.model_keys(),
        **({"w_dtype": s0.w_dtype} if s0.w_dtype != "float64" else {}),  # only the models that train W take it
    )  # fmt: skip


def _metrics(f: torch.Tensor, y: torch.Tensor, noisy: torch.Tensor) -> dict[str, np.ndarray]:
    """Loss and accuracy per run (rows of f), against labels y; split by the noisy mask if given."""
    correct = (y * f > 0).double()
    # Accuracy as count / n: a mean on CUDA multiplies by 1/n (19/20 would read 0.9500000000000001).
    out = {
        "loss": F.softplus(-y * f).mean(-1).double().cpu().numpy(),
        "acc": correct.sum(-1).cpu().numpy() / f.shape[-1],
    }
    if noisy is not None:
        noisy = noisy.to(f.device)
        clean = ~noisy
        with np.errstate(invalid="ignore"):
            out["acc_clean"] = ((correct * clean).sum(-1) / clean.sum(-1)).cpu().numpy()
            out["acc_noisy"] = ((correct * noisy).sum(-1) / noisy.sum(-1)).cpu().numpy()
            loss = F.softplus(-y * f).double()
            out["loss_clean"] = ((loss * clean).sum(-1) / clean.sum(-1)).cpu().numpy()
    return out


def _references(model, T: int) -> dict[str, np.ndarray]:
    """The fixed head's reference losses of every run (benign.synthetic.selection.reference_losses): on
    the test set, and on the clean training samples; NaN for a model without a fixed head."""
    if not hasattr(model, "head_values"):
        nan = np.full(len(model.noisy), np.nan)
        return {
            f"{where}_{k}": nan for where in ("test", "clean") for k in ("loss_selected", "loss_uniform", "acc_uniform")
        }
    test = selection.reference_losses(model.head_values("test"), model.y_test)
    clean = selection.reference_losses(model.head_values("train"), model.y, ~model.noisy)
    return {**{f"test_{k}": v for k, v in test.items()}, **{f"clean_{k}": v for k, v in clean.items()}}


def _step_metrics(model, T: int, refs: dict, f, att, ft, att_t) -> dict[str, np.ndarray]:
    """Every CURVE_COLUMNS metric of every run at one logged step, as arrays (B,)."""
    tr = _metrics(f, model.y, model.noisy)
    te = _metrics(ft, model.y_test.expand_as(ft), None)
    test_sel = selection.selection(att_t, T)
    clean_sel = selection.selection(att, T, ~model.noisy)
    noisy_sel = selection.selection(att, T, model.noisy)
    out = {
        "train_loss": tr["loss"], "test_loss": te["loss"], "train_acc": tr["acc"], "test_acc": te["acc"],
        "train_acc_clean": tr["acc_clean"], "train_acc_noisy": tr["acc_noisy"],
        "test_sel_relevant": test_sel["sel_relevant"], "test_att_relevant": test_sel["att_relevant"],
        "test_loss_normalised": selection.normalised_loss(te["loss"], refs["test_loss_selected"], refs["test_loss_uniform"]),
        "train_clean_sel_relevant": clean_sel["sel_relevant"], "train_clean_att_relevant": clean_sel["att_relevant"],
        "train_clean_loss_normalised": selection.normalised_loss(
            tr["loss_clean"], refs["clean_loss_selected"], refs["clean_loss_uniform"]
        ),
    }  # fmt: skip
    out["test_err_hardmax"] = (
        selection.hardmax_error(att_t, model.head_values("test"), model.y_test)
        if hasattr(model, "head_values")
        else np.full(len(model.noisy), np.nan)
    )
    gap = selection.gap_growth(att, T, ~model.noisy)
    out.update({"train_clean_lambda": gap["lambda"], "train_clean_g": gap["g"]})
    test_gap = selection.gap_growth(
        att_t, T
    )  # the test samples' gap: the signal's part alone (docs/regimes.md#dynamics)
    out.update({"test_lambda": test_gap["lambda"], "test_g": test_gap["g"]})
    out.update({f"train_noisy_sel_{kind}": noisy_sel[f"sel_{kind}"] for kind in selection.KINDS})
    return out


def train_batch(
    specs: list[RunSpec],
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
    code_version: str = "",
    progress_every: float = 30.0,
    checkpoint: str | Path | None = None,
    checkpoint_every: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Train runs that share a batch key together. Returns (runs, curves, attention) frames.

    With ``checkpoint`` and ``checkpoint_every`` > 0, the state (parameters, step, records so
    far; the flow's clock) is saved atomically every ``checkpoint_every`` steps (with the flow:
    every that many model updates), and a run started again resumes from it with the same result
    as an uninterrupted one (training is deterministic). The file is removed once the batch is
    done.
    """
    keys = {s.batch_key() for s in specs}
    if len(keys) != 1:
        raise ValueError(
            f"runs in one batch must share a batch key (benign.synthetic.spec.BATCH_KEYS); got {sorted(keys)}"
        )
    device = pick_device() if device is None else torch.device(device)
    if dtype is None:
        dtype = models.default_dtype(specs[0].model, device)
    t0 = time.perf_counter()
    model = _batch(specs, device, dtype)
    steps, T, key = specs[0].steps, specs[0].T, specs[0].batch_key()
    schedules = [set(log_steps(steps, s.log_every, s.log_points)) for s in specs]
    attention_runs = [b for b, s in enumerate(specs) if s.record_attention]
    identity = [s.run_id for s in specs] + [code_version, str(dtype)]
    curves, attention, start, elapsed = _resumed(checkpoint, identity, model, device, key)
    run = _Training(model, specs, _references(model, T), schedules, attention_runs, curves, attention, identity,
                    checkpoint, checkpoint_every, t0 - elapsed, progress_every)  # fmt: skip
    if specs[0].integrator == "flow":
        iterations = _train_flow(run, start)
    else:
        _train_gd(run, start)
        iterations = steps
    wall = run.seconds()
    frames = _frames(specs, curves, attention, attention_runs, model.noisy, run.refs, wall, device, code_version,
                     iterations)  # fmt: skip
    if checkpoint is not None:
        Path(checkpoint).unlink(missing_ok=True)
    return frames


@dataclass
class _Training:
    """A batch in training, as both integrators see it: its model and runs, their references,
    what each logs (``schedules``) and records, and where and how often it saves."""

    model: object
    specs: list
    refs: dict
    schedules: list
    attention_runs: list
    curves: list
    attention: list
    identity: list
    checkpoint: str | Path | None
    checkpoint_every: int
    started: float  # perf_counter() at the start, moved back by the seconds of a resumed run
    progress_every: float

    def seconds(self) -> float:
        return time.perf_counter() - self.started

    def record(self, k: int, f, att, ft, att_t) -> None:
        """The metrics of the outputs at step ``k`` appended to ``curves`` for the runs that log it,
        and the attention of those that record it to ``attention``."""
        values = _step_metrics(self.model, self.specs[0].T, self.refs, f, att, ft, att_t)
        for b, sched in enumerate(self.schedules):
            if k in sched:
                self.curves.append((b, k, *(float(values[name][b]) for name in METRIC_NAMES)))
        if self.attention_runs:
            fitted = (self.model.y * f > 0)[self.attention_runs].cpu().numpy()
            self.attention.append((k, att[self.attention_runs].double().cpu().numpy(), fitted))

    def save_or_stop(self, step: int, every: int, clock: flow.Clock | None = None) -> None:
        state = (self.identity, self.model, self.curves, self.attention, step, self.seconds())
        _checkpoint_or_stop(self.checkpoint, every, state, clock)


def _train_gd(run: _Training, start: int) -> None:
    """Gradient descent from step ``start`` to the horizon, recording the logged steps."""
    model, steps, key = run.model, run.specs[0].steps, run.specs[0].batch_key()
    wanted = set().union(*run.schedules)
    last_report = time.perf_counter()
    for k in range(start, steps + 1):
        if k in wanted:  # the step returns the outputs before its update: the training set goes through once
            ft, att_t = model.outputs_test(attention=True)
            run.record(k, *(model.outputs_train() if k == steps else model.step()), ft, att_t)
        if k == steps:
            break
        if k not in wanted:
            model.step()
        every = run.checkpoint_every if k + 1 < steps else 0  # none at the last step: the tables follow
        run.save_or_stop(k + 1, every)
        if (now := time.perf_counter()) - last_report > run.progress_every:
            last_report = now
            log.info("batch %s: step %d/%d (%.0f s)", key, k + 1, steps, run.seconds())


def _train_flow(run: _Training, start: dict | int) -> int:
    """The gradient flow (benign.synthetic.flow) from the clock ``start`` (0: time 0) to the
    horizon, recording every logged step k at time k; returns the model updates taken."""
    s0 = run.specs[0]
    model, steps, key, tol = run.model, s0.steps, s0.batch_key(), s0.flow_tol
    clock = flow.Clock(**start) if start else flow.Clock()
    last_report, saved_at = time.perf_counter(), clock.iterations
    scores = model.scores()
    for k in sorted(set().union(*run.schedules)):
        if k <= clock.logged:
            continue
        while clock.time + clock.dt <= k:
            scores = flow.advance(model, clock, tol, scores)
            due = run.checkpoint_every > 0 and clock.iterations - saved_at >= run.checkpoint_every
            saved_at = clock.iterations if due else saved_at
            run.save_or_stop(int(clock.time), 1 if due else 0, clock)  # every 1: now; 0: on a stop signal only
            if (now := time.perf_counter()) - last_report > run.progress_every:
                last_report = now
                log.info("batch %s: time %.4g of %.4g (step %d/%d), %d iterations, dt %.3g steps (%.0f s)", key,
                         clock.time * s0.normalised_step, steps * s0.normalised_step, clock.time, steps,
                         clock.iterations, clock.dt, run.seconds())  # fmt: skip
        off_grid = flow.reach(model, clock, k)
        ft, att_t = model.outputs_test(attention=True)
        run.record(k, *model.outputs_train(), ft, att_t)
        if off_grid:
            model.undo()
        clock.logged = k
    return clock.iterations


def _resumed(checkpoint, identity: list[str], model, device, key) -> tuple[list, list, int | dict | None, float]:
    """(curves, attention, where to start, seconds so far) of a batch: from its checkpoint where one
    of the same runs and code exists (the model's state restored), else from the start. Where to
    start: the next step of gradient descent, or the flow's clock (0: from time 0)."""
    state = load_checkpoint(checkpoint, device) if checkpoint is not None and Path(checkpoint).exists() else None
    if state is None:
        return [], [], 0, 0.0
    if state["identity"] != identity:
        log.warning("ignoring checkpoint %s: it belongs to other runs or code", checkpoint)
        return [], [], 0, 0.0
    model.load_state(state["model"])
    log.info("resumed batch %s from its checkpoint at step %d", key, state["step"])
    return state["curves"], state["attention"], state.get("flow") or state["step"], state["elapsed"]


def _checkpoint_or_stop(checkpoint, every: int, state: tuple, clock: flow.Clock | None = None) -> None:
    """Save the batch's state (identity, model, curves, attention, next step, seconds; the flow's
    clock) every ``every`` steps; on the scheduler's notice before a time limit (or a pre-emption),
    save it and stop."""
    identity, model, curves, attention, step, seconds = state
    extra = {} if clock is None else {"clock": clock.as_dict()}
    if checkpoint is not None and every > 0 and step % every == 0:
        save_checkpoint(checkpoint, identity, model.state(), curves, attention, step, seconds, **extra)
    if STOP.signal is not None:
        if checkpoint is not None:
            save_checkpoint(checkpoint, identity, model.state(), curves, attention, step, seconds, **extra)
        raise Stopped(STOP.signal, f"step {step}", checkpoint)


METRIC_NAMES = [name for name, _ in schema.METRICS + schema.SELECTION]  # per run and logged step
CURVE_COLUMNS = ["b", "step", *METRIC_NAMES]


def save_checkpoint(path, identity: list[str], model_state: dict, curves: list, attention: list, step: int,
                    elapsed: float, clock: dict | None = None) -> None:  # fmt: skip
    """A running batch's state as tensors and plain values only, so that loading it (with
    ``weights_only=True``) can never run code: a file on shared scratch is data, not a program.
    ``clock``: the flow's (benign.synthetic.flow.Clock), plain values."""
    state = dict(
        identity=list(identity),
        model=model_state,
        curves=torch.tensor(curves, dtype=torch.float64).reshape(-1, len(CURVE_COLUMNS)),
        attention_steps=[int(k) for k, _, _ in attention],
        attention=[torch.from_numpy(np.ascontiguousarray(a)) for _, a, _ in attention],
        fitted=[torch.from_numpy(np.ascontiguousarray(f)) for _, _, f in attention],
        step=int(step),
        elapsed=float(elapsed),
    )
    if clock is not None:
        state["flow"] = dict(clock)
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def load_checkpoint(path, device) -> dict | None:
    """The state :func:`save_checkpoint` wrote, or None (with a warning naming the file) for a
    file that is anything but tensors and plain values: the batch then starts again."""
    try:
        state = torch.load(path, map_location=device, weights_only=True)
        curves = [(int(r[0]), int(r[1]), *r[2:]) for r in state["curves"].tolist()]
        attention = [
            (k, a.cpu().numpy(), f.cpu().numpy())
            for k, a, f in zip(state["attention_steps"], state["attention"], state["fitted"])
        ]
        if "flow" in state:
            state["flow"] = flow.Clock(**state["flow"]).as_dict()
    except Exception as err:  # pickle.UnpicklingError for code, KeyError/TypeError for other layouts
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        log.warning(
            "refusing checkpoint %s: not a checkpoint of tensors and plain values (%s); recomputing", path, reason
        )
        return None
    return dict(state, curves=curves, attention=attention)


def save_frames(folder: Path, frames: tuple[pd.DataFrame, ...]) -> None:
    """A finished batch's (runs, curves, attention) frames as Parquet files in ``folder``, which
    appears whole or not at all."""
    tmp = folder.with_name(f".{folder.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, frame in zip(FRAME_NAMES, frames):
        frame.to_parquet(tmp / f"{name}.parquet", index=False)
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)


def load_frames(folder: Path) -> tuple[pd.DataFrame, ...]:
    return tuple(pd.read_parquet(folder / f"{name}.parquet") for name in FRAME_NAMES)


FRAME_NAMES = ("runs", "curves", "attention")


def _frames(specs, curves, attention, attention_runs, noisy, refs, wall, device, code_version, iterations):
    cdf = pd.DataFrame(curves, columns=CURVE_COLUMNS)
    ids = [s.run_id for s in specs]
    cdf.insert(0, "run_id", [ids[b] for b in cdf.pop("b")])
    final = cdf[cdf.step == specs[0].steps].set_index("run_id")
    rows = []
    for b, s in enumerate(specs):
        m = final.loc[s.run_id]
        finite = bool(np.isfinite(m[["train_loss", "test_loss"]].to_numpy(dtype=float)).all())
        row = {k: v for k, v in dataclasses.asdict(s).items() if k in spec.COLUMNS}
        row["step_size"] = s.step_size if s.step_size is not None else s.normalised_step  # lr sigma^2 d, always
        row.update(
            run_id=s.run_id,
            snr=s.snr,
            n_noisy=int(noisy[b].sum()),
            iterations=int(iterations),
            status="ok" if finite else "diverged",
            wall_time_s=wall / len(specs),
            device=str(device),
            code_version=code_version,
        )
        for k in METRIC_NAMES:
            row[k] = float(m[k]) if finite else float("nan")
        for k in ("loss_selected", "loss_uniform", "acc_uniform"):
            row[f"test_{k}"] = float(refs[f"test_{k}"][b])
        row["regime"] = row["head_acc_regime"] = None  # thresholds of the config: set when runs are gathered
        for name in MILESTONES:  # likewise (benign.analysis.milestones.annotate)
            row[f"{name}_step"], row[f"{name}_censored"] = float("nan"), None
        if not finite:
            log.warning("run %s diverged (non-finite loss at the last step); marked 'diverged'", s.run_id)
        rows.append(row)
    runs = pd.DataFrame(rows)
    att_rows = []
    for k, arr, fitted in attention:
        _, n, TT = arr.shape
        for j, b in enumerate(attention_runs):
            probs = arr[j]
            token_index = np.arange(TT) - (TT - specs[b].T)  # encoder: [CLS] is -1
            att_rows.append(
                pd.DataFrame(
                    {
                        "run_id": ids[b],
                        "step": k,
                        "sample": np.repeat(np.arange(n), TT),
                        "token": np.tile(token_index, n),
                        "probability": probs.reshape(-1),
                        "noisy": np.repeat(noisy[b].numpy(), TT),
                        "fitted": np.repeat(fitted[j], TT),
                    }
                )
            )
    adf = (
        pd.concat(att_rows, ignore_index=True)
        if att_rows
        else pd.DataFrame(columns=["run_id", "step", "sample", "token", "probability", "noisy", "fitted"])
    )
    return runs, cdf, adf


def train_runs(
    specs: list[RunSpec],
    device=None,
    dtype=None,
    code_version: str = "",
    progress_every: float = 30.0,
    checkpoint_dir: str | Path | None = None,
    checkpoint_every: int = 0,
):
    """Train any list of runs, batching those that share a batch key. Returns concatenated frames.

    With ``checkpoint_dir``, each finished batch's frames are kept there as Parquet (and each
    running batch checkpoints every ``checkpoint_every`` steps, tensors only), so a job killed
    and started again loses no finished work. The folder stays when every batch is done: a job
    can be ruled failed after its last step (benign.core.job_state), and its retry then writes
    the outputs from the kept frames. State of other runs or code in the folder is removed.
    """
    out = []
    ordered = sorted(specs, key=lambda s: s.batch_key())
    folder = Path(checkpoint_dir) if checkpoint_dir is not None else None
    groups = [list(group) for _, group in groupby(ordered, key=lambda s: s.batch_key())]
    tags = [hashlib.sha1(json.dumps([s.run_id for s in g] + [code_version]).encode()).hexdigest()[:12] for g in groups]
    if folder is not None and folder.is_dir():
        for stale in folder.glob("*-*"):
            if stale.name.split("-", 1)[1].removesuffix(".pt") not in tags:
                log.info("removing %s: state of other runs or code", stale)
                shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    for group, tag in zip(groups, tags):
        key = group[0].batch_key()
        done = folder / f"done-{tag}" if folder else None
        if done is not None and done.is_dir():
            log.info("batch %s already done (kept from an interrupted job)", key)
            out.append(load_frames(done))
            continue
        log.info("training %d run(s) of batch %s", len(group), key)
        frames = train_batch(group, device=device, dtype=dtype, code_version=code_version, progress_every=progress_every,
                             checkpoint=folder / f"running-{tag}.pt" if folder else None, checkpoint_every=checkpoint_every)  # fmt: skip
        if done is not None:
            save_frames(done, frames)
        out.append(frames)
    runs, curves, attention = (pd.concat(frames, ignore_index=True) for frames in zip(*out))
    rss_mb, cuda_mb = peak_memory_mb(runs["device"].iloc[0] if len(runs) else "cpu")
    return runs.assign(peak_rss_mb=rss_mb, peak_cuda_mb=cuda_mb), curves, attention
