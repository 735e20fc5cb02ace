"""The theory's clock g (benign.synthetic.clock): g(x) = 2x + 2 sinh(x - log T) is the integral of
1 / (s (1 - s)) for the softmax weight s = e^x / (e^x + T); checked against that integral."""

import math

import numpy as np
from scipy.integrate import quad

from benign.synthetic.clock import g


def test_g_grows_as_the_integral_of_one_over_s_one_minus_s():
    T = 8
    weight = lambda x: math.exp(x) / (math.exp(x) + T)  # noqa: E731
    for a, b in [(0.0, 1.0), (-2.0, 3.0), (1.0, 6.0)]:
        integral, _ = quad(lambda x: 1 / (weight(x) * (1 - weight(x))), a, b)
        assert math.isclose(float(g(b, T) - g(a, T)), integral, rel_tol=1e-9), (a, b)


def test_g_at_the_uniform_point_and_on_arrays():
    assert float(g(math.log(4), 4)) == 2 * math.log(4)  # sinh(0) = 0
    assert np.allclose(g(np.array([0.0, 1.0]), 8), [2 * np.sinh(-math.log(8)), 2 + 2 * np.sinh(1 - math.log(8))])
