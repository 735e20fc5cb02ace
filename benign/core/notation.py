"""The paper's symbols for the parameters both halves name: (text, for tables; matplotlib
mathtext, for figures). The run spec's parameters take theirs from here
(benign.synthetic.spec.SYMBOLS, TEX), and the real half's tables and figures write eta with it."""

from __future__ import annotations

SYMBOLS = {
    "eta": ("η", r"$\eta$"),  # the label-noise rate
    "rho": ("ρ", r"$\rho$"),  # the weak signal's scale
    "sigma": ("σ", r"$\sigma$"),  # the noise's standard deviation
    "signal_norm": ("‖μ‖", r"$\Vert\mu\Vert$"),
    "n_test": ("n_test", r"$n_{\rm test}$"),
    "lambda": ("λ", r"$\lambda$"),  # Figure 1's noise weight of the query
}
TEXT = {name: text for name, (text, _) in SYMBOLS.items()}
TEX = {name: tex for name, (_, tex) in SYMBOLS.items()}
