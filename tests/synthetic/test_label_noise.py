"""Label noise of the synthetic protocol (benign.synthetic.label_noise): exactly
floor(ceil(eta n) / 2) labels flipped in each class, drawn from the run's stream."""

import pytest
import torch

from benign.synthetic.label_noise import flip_balanced


@pytest.mark.parametrize("n, eta, per_class", [(20, 0.2, 2), (14, 0.2, 1), (28, 0.2, 3), (20, 0.0, 0), (10, 0.25, 1)])
def test_each_class_has_exactly_its_share_of_flips(n, eta, per_class):
    """Worked by hand: n 14 at eta 0.2 asks ceil(2.8) = 3 flips, 1 a class; n 28, ceil(5.6) = 6."""
    y = torch.tensor([1, -1] * (n // 2))
    mask = flip_balanced(y, eta, torch.Generator().manual_seed(0))
    assert int(mask[y == 1].sum()) == per_class and int(mask[y == -1].sum()) == per_class


def test_the_same_stream_flips_the_same_labels_and_too_many_flips_are_refused():
    y = torch.tensor([1] * 6 + [-1] * 2)
    a, b = (flip_balanced(y, 0.5, torch.Generator().manual_seed(3)) for _ in range(2))
    assert torch.equal(a, b)
    with pytest.raises(ValueError, match="asks for 3 flips in class -1, which has 2 samples"):
        flip_balanced(y, 0.75, torch.Generator().manual_seed(3))
