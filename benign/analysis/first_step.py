"""The first gradient step's selection boundary in closed form (docs/regimes.md#the-first-step).

From p = 0 one step of any size moves the query to q = -lr W0 W0^T X^T g, g = dL/ds at uniform
attention (W's first update is zero: it is proportional to p = 0). A test token's logit is
<x_t, q>: its noise part is N(0, sigma^2 ||q||^2), independent across tokens, so per test token

    logit / (sigma ||q||) ~ N(m_t, 1),   m = (kappa, rho kappa, rho kappa, 0, ..., 0)

for the relevant token, the two weak ones and the T - 3 irrelevant ones. To leading order in
d (W0 W0^T ~ I/3 on the signal, ||W0 W0^T v||^2 ~ (2/9) ||v||^2 on the noise),

    kappa = ||mu||^2 S1 (1 - (1 + 2 rho) / T) sqrt(n) / (4 sigma^2 sqrt(d S2 m2)),

S1 = (1 - eta) s_c - eta s_f and S2 = (1 - eta) s_c^2 + eta s_f^2 with the sigmoids s_c, s_f =
sigma(-/+ 1 / (sqrt(2) T)) of a clean and a flipped sample at uniform attention, eta the
realised flip rate, and m2 = (1 + 2 rho^2) / 2 - 1 / (2T) + (T - 1) sigma^2 / ||mu||^2 the
spread of a sample's head values about their mean. The step's size cancels: the boundary is
the same for every lr. kappa standardises by the noise part of the query alone (v = X^T g =
v_s + v_n, its signal and noise parts). The term it leaves out: the signal part adds
||v_s||^2 / ||v_n||^2 = 4 kappa^2 sigma^2 / ||mu||^2 to ||q||^2 at leading order, a factor
1 / sqrt(1 + 4 kappa^2 sigma^2 / ||mu||^2) on kappa (:func:`signal_factor`; ``signal_part`` keeps
it): about 0.955 at the crossings of d 10^3, n 10, 0.985 at d / n 10^3. It is left out, and
named: at d 10^3, n 10 (one cell, 30 draws) the step-one kappa measured from the query itself,
which holds the signal part by construction, lies within its interval of the law without it, so
other left-out terms of the same order offset it there; one cell cannot separate them
(tests/analysis/test_first_step.py prints both laws beside the measurement). kappa ~ ||mu||^2 sqrt(n / d), so a boundary at a
fixed kappa is ||mu||* ~ (d / n)^(1/4), before any dynamics.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from benign.synthetic.spec import n_flips

SQRT_2PI = np.sqrt(2 * np.pi)  # the normal density's constant, as scipy.stats.norm writes it

LABELS = ("selects_argmax", "selects_hardmax")  # the labels of benign.analysis.theory the law predicts


def realised_eta(n: int, eta: float) -> float:
    """The flip rate the protocol realises: n_flips(n, eta) / n (half in each class)."""
    return n_flips(n, eta) / n


def kappa(signal_norm, d, n, T: int = 8, rho: float = 0.1, eta: float = 0.2, sigma: float = 1.0,
          signal_part: bool = False):  # fmt: skip
    """The relevant token's standardised test logit after the first step (module docstring);
    ``eta`` is the nominal rate, realised here at an integer n (a real n, as the law's exponent
    of n takes it, keeps the rate given); with ``signal_part``, times :func:`signal_factor` (the
    query's norm with its signal part)."""
    m = np.asarray(signal_norm, dtype=float)
    eta = realised_eta(n, eta) if float(n).is_integer() else eta
    half = 1.0 / (math.sqrt(2) * T)  # |f| of a sample at uniform attention, signal part
    s_c, s_f = 1 / (1 + math.exp(half)), 1 / (1 + math.exp(-half))
    S1, S2 = (1 - eta) * s_c - eta * s_f, (1 - eta) * s_c**2 + eta * s_f**2
    m2 = (1 + 2 * rho**2) / 2 - 1 / (2 * T) + (T - 1) * sigma**2 / m**2
    k = m**2 * S1 * (1 - (1 + 2 * rho) / T) * math.sqrt(n) / (4 * sigma**2 * np.sqrt(np.asarray(d) * S2 * m2))
    return k * _factor(k, m, sigma) if signal_part else k


def _factor(k, signal_norm, sigma: float):
    return 1 / np.sqrt(1 + 4 * k**2 * sigma**2 / np.asarray(signal_norm, dtype=float) ** 2)


def signal_factor(signal_norm, d, n, T: int = 8, rho: float = 0.1, eta: float = 0.2, sigma: float = 1.0):
    """The factor the query's signal part would put on kappa (module docstring): the size of the
    term the law leaves out."""
    return _factor(kappa(signal_norm, d, n, T, rho, eta, sigma), signal_norm, sigma)


def _argmax_probability(mean: float, groups: dict[float, int]) -> float:
    """P(a given token of standardised mean ``mean`` has the largest of independent N(m, 1)
    logits, ``groups`` counting the tokens at each mean m, itself included): the integral of its
    density times the others' distribution functions, by the trapezoid rule on a fine grid."""
    x = np.linspace(mean - 10, mean + 10, 4001)
    log_cdf = sum((count - (m == mean)) * special.log_ndtr(x - m) for m, count in groups.items())
    return float(np.trapezoid(np.exp(-((x - mean) ** 2) / 2.0) / SQRT_2PI * np.exp(log_cdf), x))


def selection_probabilities(k: float, rho: float, T: int) -> dict[str, float]:
    """Where the most-attended test token lies at standardised means (k, rho k, rho k, 0, ...):
    the relevant token, each weak one, and any of the T - 3 irrelevant ones."""
    groups: dict[float, int] = {}
    for m, count in ((k, 1), (rho * k, 2), (0.0, T - 3)):  # equal means (k 0, or rho 0) pool
        groups[m] = groups.get(m, 0) + count
    weak = _argmax_probability(rho * k, groups)
    return {"relevant": _argmax_probability(k, groups), "weak_true": weak, "weak_other": weak,
            "irrelevant": (T - 3) * _argmax_probability(0.0, groups)}  # fmt: skip


def argmax_rate(signal_norm: float, d, n: int, T: int = 8, rho: float = 0.1, eta: float = 0.2,
                sigma: float = 1.0, signal_part: bool = False) -> float:  # fmt: skip
    """The share of test samples whose most-attended token is the relevant one, after step 1."""
    k = float(kappa(signal_norm, d, n, T, rho, eta, sigma, signal_part))
    return selection_probabilities(k, rho, T)["relevant"]


def hardmax_error(signal_norm: float, d, n: int, T: int = 8, rho: float = 0.1, eta: float = 0.2,
                  sigma: float = 1.0, signal_part: bool = False) -> float:  # fmt: skip
    """The hard-max readout's test error after step 1: the sign of the chosen token's head value
    <x, nu> = (its signal) / sqrt(2) + N(0, sigma^2 / ||mu||^2), whose noise is independent of
    the logits' (q lies along e_1 + e_2, nu along e_1 - e_2)."""
    p = selection_probabilities(float(kappa(signal_norm, d, n, T, rho, eta, sigma, signal_part)), rho, T)
    z = signal_norm / (math.sqrt(2) * sigma)
    wrong = {"relevant": special.ndtr(-z), "weak_true": special.ndtr(-rho * z), "weak_other": special.ndtr(rho * z),
             "irrelevant": 0.5}  # fmt: skip
    return float(sum(p[k] * wrong[k] for k in p))


def boundary(label: str, d, n: int, T: int = 8, rho: float = 0.1, eta: float = 0.2, sigma: float = 1.0, *,
             criteria, signal_part: bool = False) -> float:  # fmt: skip
    """||mu||* of ``label`` (:data:`LABELS`) after the first step: where the argmax rate reaches
    ``criteria.rate_threshold`` or the hard-max error falls to ``criteria.hardmax_threshold``
    (``criteria``: the labels' thresholds, benign.analysis.theory.Criteria, whose one owner is the
    config's schema); ``signal_part``: as :func:`kappa`."""
    if label == "selects_argmax":
        rate = criteria.rate_threshold
        gap = lambda lm: argmax_rate(math.exp(lm), d, n, T, rho, eta, sigma, signal_part) - rate  # noqa: E731
    elif label == "selects_hardmax":
        error = criteria.hardmax_threshold
        gap = lambda lm: error - hardmax_error(math.exp(lm), d, n, T, rho, eta, sigma, signal_part)  # noqa: E731
    else:
        raise ValueError(f"label must be one of {LABELS}, got {label!r}")
    top = math.log(sigma * 100 * (float(d) / n) ** 0.25)  # kappa grows like ||mu||^2: far above any crossing
    return math.exp(optimize.brentq(gap, math.log(sigma * 1e-2), top, xtol=1e-10))


def exponents(label: str, d: float, n: float, T: int = 8, rho: float = 0.1, eta: float = 0.2,
              sigma: float = 1.0, step: float = 0.05, *, criteria) -> dict[str, float]:  # fmt: skip
    """The law's local exponents of d and n at (d, n), a = dln||mu||*/dln d and b likewise
    (central differences over a factor exp(step); n at its realised flip rate), and c =
    ||mu||* / (d / n)^(1/4); ``criteria``: as :func:`boundary`."""
    eta = realised_eta(int(n), eta) if float(n).is_integer() else eta
    at = lambda dd, nn: math.log(boundary(label, dd, nn, T, rho, eta, sigma, criteria=criteria))  # noqa: E731
    e = math.exp(step)
    a = (at(d * e, n) - at(d / e, n)) / (2 * step)
    b = (at(d, n * e) - at(d, n / e)) / (2 * step)  # n real: the flip rate held at n's
    return {"a": a, "b": b, "c": boundary(label, d, n, T, rho, eta, sigma, criteria=criteria) / (d / n) ** 0.25}
