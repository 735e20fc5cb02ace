"""What a batch of synthetic runs costs (benign.synthetic.costs): its memory against the tensors a
built batch really holds, and its time's cost model worked by hand."""

import pytest
import torch

from benign.synthetic import costs, models, registry


def held_bytes(obj, seen=None) -> int:
    """Bytes of every distinct tensor storage an object holds (attributes, dicts, lists, nested objects)."""
    seen = set() if seen is None else seen
    if isinstance(obj, torch.Tensor):
        key = obj.untyped_storage().data_ptr()
        if key in seen:
            return 0
        seen.add(key)
        return obj.untyped_storage().nbytes()
    if isinstance(obj, dict):
        return sum(held_bytes(v, seen) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(held_bytes(v, seen) for v in obj)
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return sum(held_bytes(v, seen) for v in vars(obj).values())
    return 0


@pytest.mark.parametrize(
    "model, n, T, d, B",
    [("token", 20, 8, 1000, 9), ("token", 40, 8, 300, 3), ("encoder", 20, 8, 300, 6), ("encoder", 10, 4, 600, 8)],
)
def test_the_memory_estimate_counts_what_a_batch_holds(model, n, T, d, B):
    """Against the tensors a built batch really holds: at least them, and within 2x of them
    (the estimate also counts what lives only for a while: a checkpoint's copy, the float64
    initialisation and the data drawn on the way, which weigh most in batches of few runs)."""
    keys = {"mlp_dim": 64} if model == "encoder" else {}
    batch = models.build(model, n=n, T=T, d=d, sigma=1.0, n_test=50, seed=1, signal_norms=[5.0] * B,
                         rhos=[0.1] * B, etas=[0.1] * B, lrs=[0.1] * B, **keys)  # fmt: skip
    held = held_bytes(batch)
    runs = [dict(model=model, n=n, T=T, d=d, n_test=50, steps=100, mlp_dim=keys.get("mlp_dim"))] * B
    counted, _ = registry.model(model).cost(B, runs[0], "cpu")
    assert held <= counted <= 2 * held, (model, held, counted)


def test_an_encoder_batchs_time_is_its_cost_model_worked_by_hand():
    # B 3 runs of n 10 samples, T 4, d 30, MLP 64: per sample and step d^2 + 2 d m + T d = 900 + 3840 + 120
    a, c = costs.CPU_SECONDS["encoder"]["a"], costs.CPU_SECONDS["encoder"]["c"]
    run = dict(n=10, T=4, d=30, n_test=50, steps=200, mlp_dim=64)
    _, seconds = costs.encoder_batch(3, run, "cpu")
    assert seconds == pytest.approx(a * 200 * 3 * 10 * 4860 + c * 200)
    assert costs.encoder_batch(3, run, "cuda")[1] == pytest.approx(seconds / costs.DEVICE_SPEED["cuda"]["encoder"])


def test_a_token_batch_needs_its_engine_resolved_and_the_gram_engine_does_not_grow_with_d():
    run = dict(n=10, T=4, d=10**6, n_test=50, steps=100, engine="auto")
    with pytest.raises(ValueError, match="resolve it first"):
        costs.token_batch(2, run, "cpu")
    big, small = (
        costs.token_batch(2, dict(run, engine="gram"), "cpu"),
        costs.token_batch(2, dict(run, engine="gram", d=10**3), "cpu"),
    )
    assert big == small  # the Gram engine trains in 2(nT + 2) coordinates whatever d
    assert costs.token_batch(2, dict(run, engine="explicit", d=10**3), "cpu")[0] > 0
