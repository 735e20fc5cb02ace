"""What a batch of synthetic runs costs: (bytes, seconds) of B runs like one run on a device kind,
one function per model, named by its entry in benign.synthetic.registry. The planner
(benign/plan/resources.py) sizes the jobs and their requests with them. Torch-free: the workflow
computes them at parse time. Time follows a cost model per model, fitted to measured wall times
(``CPU_SECONDS``; ``DEVICE_SPEED`` scales it for a GPU).
"""

from __future__ import annotations

from benign.synthetic import flow
from benign.synthetic.engines import gram_min_d
from benign.synthetic.speed.settings import DEFER_ROWS, TEST_CACHE_FLOATS  # torch-free

# Seconds of one CPU core, fitted to the default reproduction's measured wall times (per batch):
# token model: a * steps * B * N^2 + b * (N d^2 + N_test N d) + c * steps + e, N = n T;
# encoder: a * steps * B * n * (d^2 + 2 d m + T d) + c * steps.
CPU_SECONDS = {
    "token": dict(a=1.55e-9, b=1.94e-10, c=1.6e-4, e=0.15),
    "encoder": dict(a=1.52e-10, c=1.15e-3),
}
# The per-run term of a W-trained run whose A is float32 (``w_dtype``), against float64: reading A
# bounds it (measured on an n = 80 refinement job of the default atlas, 2-core Intel Xeon).
A_FLOAT32 = 0.5
# A step of the gradient flow against one of gradient descent: the copy of the state it may undo,
# the update and the logits after it (benign.synthetic.flow), measured about 2 to 2.5 at N = 80 to 320.
FLOW_STEP = 2.5
# How much faster a device kind runs each cost model than one CPU core (benchmarks/README.md,
# the H200 rows against the CPU rows; conservative).
DEVICE_SPEED = {"cpu": {"token": 1.0, "encoder": 1.0}, "cuda": {"token": 2.0, "encoder": 10.0}}
# Bytes per number: the models' dtypes (token model float64 on CPU, float32 on GPU; encoder float32).
DTYPE_BYTES = {("token", "cpu"): 8, ("token", "cuda"): 4, ("encoder", "cpu"): 4, ("encoder", "cuda"): 4}


def token_batch(B: int, run: dict, device: str) -> tuple[float, float]:
    """(bytes, seconds) of one token-model batch (benign/synthetic/models/token_selection.py), its
    engine resolved (benign.synthetic.spec.resolve_engine). With
    the flow, its steps take the place of gradient descent's: :func:`flow_updates`."""
    n, T, d, n_test, steps = run["n"], run["T"], run["d"], run["n_test"], run["steps"]
    if run.get("integrator") == "flow":
        steps = flow_updates(run)
    N, Nt, b = n * T, n_test * T, DTYPE_BYTES[("token", device)]
    w0 = d * d
    engine = run.get("engine") or "explicit"
    if engine == "auto":
        raise ValueError(
            "the cost of a run whose engine is 'auto': resolve it first (benign.synthetic.spec.resolve_engine)"
        )
    if engine == "gram":  # the same program in 2(N + 2) coordinates, W0 (2m, m)
        d = gram_min_d(n, T)
        w0 = d * d // 2
    shared = w0 + 4 * N * d + 2 * Nt * d + 2 * N * N + 2 * Nt * N  # W0, E, YE, VE, Et; EVE, EE; EtVE, EtE
    a_bytes, a_time = (4, A_FLOAT32) if run.get("w_dtype") == "float32" and device == "cpu" else (b, 1.0)
    per_run = (2 * N * N * a_bytes + (6 * N + 2 * Nt) * b) / b  # A and its spare; c, coefficients, test coefficients
    host = 8 * (N + Nt) * d if device != "cpu" else 0  # the float64 noise drawn on the host
    k = CPU_SECONDS["token"]
    seconds = a_time * k["a"] * steps * B * N * N + k["b"] * (N * d * d + Nt * N * d) + k["c"] * steps + k["e"]
    return b * (shared + B * per_run) + host, seconds / DEVICE_SPEED[device]["token"]


def flow_updates(run: dict) -> float:
    """What a flow run (benign.synthetic.flow) costs, in gradient-descent steps: its steps
    (flow.iterations, about 4 log(steps) / tol plus one a logged step) times FLOW_STEP."""
    steps, every, points = run["steps"], run.get("log_every") or 0, run.get("log_points") or 0
    logged = points + 2 if points else steps // every + 2 if every else 2
    return FLOW_STEP * flow.iterations(steps, run.get("flow_tol") or flow.TOL, min(logged, steps + 1))


def encoder_batch(B: int, run: dict, device: str) -> tuple[float, float]:
    """(bytes, seconds) of one encoder batch (benign/synthetic/models/encoder.py)."""
    n, T, d, n_test, steps, m = run["n"], run["T"], run["d"], run["n_test"], run["steps"], run["mlp_dim"]
    b = DTYPE_BYTES[("encoder", device)]
    params = 3 * d * d + 2 * d * m + 7 * d + m + 1
    deferred = 2 * DEFER_ROWS * 2 * d + (DEFER_ROWS // n) * n * ((d + d) + (d + m) + (m + d))  # Wq, Wk; Wv, W1, W2
    tokens = 2 * n * T * d  # the training tokens and their LayerNorm
    test = n_test * T * d * (1 + (B * n_test * T * d <= TEST_CACHE_FLOATS) * B) + B * n_test * T * 2
    # the matrices' updates go in place or into the pending rows: no gradient tensor per matrix
    numbers = B * (params + deferred + tokens) + test
    init = 12 * params + 8 * (n + n_test) * T * d  # one run's float64 initialisation and its copy; the noise
    k = CPU_SECONDS["encoder"]
    seconds = k["a"] * steps * B * n * (d * d + 2 * d * m + T * d) + k["c"] * steps
    return b * numbers + init, seconds / DEVICE_SPEED[device]["encoder"]
