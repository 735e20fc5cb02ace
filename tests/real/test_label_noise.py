"""Nested multiclass label noise (docs/real_protocol.md#label-noise): rate, never the true class, nested across eta."""

import pytest
import torch

from benign.real.label_noise import draw_nested_noise


def noise(n: int = 200_000, classes: int = 10, seed: int = 0):
    y = torch.randint(0, classes, (n,), generator=torch.Generator().manual_seed(seed))
    return draw_nested_noise(y, classes, torch.Generator().manual_seed(seed + 1))


@pytest.mark.parametrize("eta", [0.0, 0.05, 0.1, 0.2, 0.5])
def test_flip_rate_is_close_to_eta(eta):
    draw = noise()
    rate = draw.flipped(eta).double().mean().item()
    sd = (eta * (1 - eta) / draw.y.numel()) ** 0.5
    assert abs(rate - eta) <= 5 * sd + 1e-12


def test_flipped_labels_never_keep_the_true_class_and_spread_over_the_others():
    draw = noise()
    assert (draw.other != draw.y).all()
    labels = draw.labels(0.3)
    flipped = draw.flipped(0.3)
    assert (labels[flipped] != draw.y[flipped]).all()
    assert (labels[~flipped] == draw.y[~flipped]).all()
    # the new class is uniform over the 9 others: offsets 1..9 equally often
    offsets = (draw.other - draw.y) % 10
    counts = torch.bincount(offsets, minlength=10)[1:].double()
    assert counts.min() / counts.max() > 0.95


def test_noise_is_nested_across_eta():
    draw = noise(n=20_000)
    etas = [0.0, 0.01, 0.1, 0.15, 0.2]
    for small, large in zip(etas, etas[1:]):
        assert not (draw.flipped(small) & ~draw.flipped(large)).any()
        kept = draw.flipped(small)
        assert (draw.labels(small)[kept] == draw.labels(large)[kept]).all()
    assert (draw.labels(0.0) == draw.y).all()


def test_two_classes_always_flip_to_the_other():
    draw = noise(n=5_000, classes=2)
    assert (draw.other == 1 - draw.y).all()
    assert (draw.labels(1.0) == 1 - draw.y).all()


def test_same_generator_seed_gives_the_same_noise():
    a, b = noise(n=1000, seed=3), noise(n=1000, seed=3)
    assert torch.equal(a.u, b.u) and torch.equal(a.other, b.other)


def test_refuses_bad_input():
    with pytest.raises(ValueError, match="at least 2 classes"):
        draw_nested_noise(torch.zeros(3, dtype=torch.long), 1, torch.Generator())
    with pytest.raises(ValueError, match="labels must lie"):
        draw_nested_noise(torch.tensor([0, 3]), 3, torch.Generator())
    with pytest.raises(ValueError, match="eta"):
        noise(n=10).labels(1.5)
