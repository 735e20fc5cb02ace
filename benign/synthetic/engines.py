"""How a token-model run's data and initialisation are drawn: explicitly in d coordinates, or by the
Gram engine in 2(nT + 2) (benign.synthetic.gram), or ``auto``, the Gram engine where d allows.

A leaf: it imports nothing of benign, so the run spec, the cost models and the Gram engine read it
at import without a circle.
"""

from __future__ import annotations

ENGINES = ("explicit", "gram", "auto")


def gram_min_d(n: int, T: int) -> int:
    """The least d the Gram engine allows: 2(nT + 2) (benign.synthetic.gram)."""
    return 2 * (n * T + 2)


def resolve(engine: str | None, model_engines: tuple, n: int, T: int, d: int) -> str:
    """An engine with ``auto`` decided for a run of (n, T, d) whose model has ``model_engines``:
    gram where the model has it and d allows, explicit otherwise; None means explicit."""
    engine = engine or "explicit"
    if engine != "auto":
        return engine
    return "gram" if "gram" in model_engines and d >= gram_min_d(n, T) else "explicit"
