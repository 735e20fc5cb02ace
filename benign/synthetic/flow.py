"""Gradient flow with an adaptive step (docs/model.md#gradient-flow-with-an-adaptive-step): the
token models integrated to times that fixed-step gradient descent cannot reach.

The flow is d theta / dt = -lr grad L(theta), time t counted in nominal steps (a gradient-descent
step of the run's lr moves it by 1), so the state at time k is what a run logs as step k.
Explicit Euler steps of length dt (one gradient-descent step at lr x dt) integrate it:

- the first is dt = 1, gradient descent's first step;
- the next length follows the largest change of any training logit s = X W p over the batch's
  runs: dt x min(2, 0.9 tol / change), at most doubling; a step that changed one by more than
  2 tol is undone and retried shorter;
- the runs of a batch share every step (they stay on one time and log together);
- a logged step k is reached by a step from the last point of the grid before it, which is then
  undone: the grid depends on the state alone, never on the horizon or the logged steps, so a
  shorter run is a prefix of a longer one, as with gradient descent.

Logits grow like log t, so a step of a fixed change grows like t and a run to time t takes
about log(t) / tol steps. What a model needs for it: ``step(dt, keep)``, ``scores()`` and
``undo()``, which takes back a step taken with ``keep`` without copying the state (benign.synthetic.models.token_selection.Batch). Torch-free at import: the
planner reads its constants and its cost estimate.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

INTEGRATORS = ("gd", "flow")  # gradient descent at the run's lr; the adaptive gradient flow
TOL = 0.05  # the default tolerance: the largest change of a training logit per step
GROWTH = 2.0  # the most one step's length grows over the last
SAFETY = 0.9  # the next length aims at this fraction of the tolerance
REJECT = 2.0  # a step that changed a logit by more than this many tolerances is undone
MIN_DT = 1e-9  # a step shorter than this (in nominal steps) means the flow is not smooth: an error
# Steps per unit of log time at tolerance 1: a run to step k takes about STEPS_PER_LOG x log(k) / tol
# steps, plus one a logged step (measured 1.3 to 3.2 on the Gram engine, n 10 to 40, ||mu|| 1 to
# 1024, horizons 10^3 to 2 x 10^7; the estimate takes 4).
STEPS_PER_LOG = 4.0


@dataclass
class Clock:
    """Where a batch's integration stands, in plain values (a checkpoint holds it): the time of
    the grid's last point (nominal steps), the next step's length, the model updates taken
    (rejected ones and the logged steps' included) and the last logged step (-1: none yet)."""

    time: float = 0.0
    dt: float = 1.0
    iterations: int = 0
    logged: int = -1

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def change(before, after) -> float:
    """The largest absolute change of any logit, over every run; inf where one is not finite."""
    return float((after - before).abs().nan_to_num(nan=math.inf).max())


def advance(model, clock: Clock, tol: float, scores):
    """One step of the grid from ``clock.time``, retried shorter until its change is at most
    REJECT x tol (the first step, gradient descent's, is kept whatever its change). Updates the
    clock and returns the logits at the new point."""
    first = clock.time == 0.0
    while True:
        dt = 1.0 if first else clock.dt
        model.step(dt, keep=True)
        clock.iterations += 1
        after = model.scores()
        moved = change(scores, after)
        if first or moved <= REJECT * tol:
            clock.time += dt
            clock.dt = dt * (GROWTH if moved == 0 else min(GROWTH, SAFETY * tol / moved))
            return after
        model.undo()
        clock.dt = dt * min(0.5, SAFETY * tol / moved)
        if clock.dt < MIN_DT:
            raise FloatingPointError(
                f"gradient flow: the step fell below {MIN_DT:g} at time {clock.time:g} (a logit changed by {moved:g})"
            )


def reach(model, clock: Clock, k: int) -> bool:
    """The model at step ``k`` (clock.time <= k < clock.time + clock.dt): one step from the grid's
    last point, to be taken back (``model.undo()``) once the step is logged. False when k is on
    the grid (no step taken)."""
    if k == clock.time:
        return False
    model.step(k - clock.time, keep=True)
    clock.iterations += 1
    return True


def iterations(steps: int, tol: float, logged: int) -> int:
    """About how many model updates a flow run to ``steps`` takes at tolerance ``tol``, logging
    ``logged`` steps: STEPS_PER_LOG x log(1 + steps) / tol plus one a logged step, at most
    ``steps`` plus the logged ones."""
    return int(min(steps, STEPS_PER_LOG * math.log1p(steps) / tol)) + logged
