"""Synthetic half: train the token-selection model and the one-layer encoder, aggregate.

The fitted atlas's chain goes first (priority ATLAS_FIRST, above the real half's): its coarse
jobs, the refinement they plan and the limit read one another in turn, so started late they
would leave one core working alone at the end; every other job fills the cores around them,
after the real half's training (REAL_TRAINING), the longest first.
"""

ATLAS_FIRST = 60  # above the real-data chain's 50 (workflow/rules/real.smk)
REAL_TRAINING = 20  # train_real's (workflow/rules/real.smk)


rule train_synthetic:
    """One job trains many runs (a chunk of a sweep, or the named settings) as one batched program."""
    output:
        **paths.tables(paths.SYNTHETIC_JOB),
    log:
        "logs/synthetic/train_{job}.log",
    priority: lambda wc: W.synthetic_priority(wc.job, ATLAS_FIRST, REAL_TRAINING)
    conda:
        "../envs/benign.yaml"
    resources:
        gpu=W.gpu,
        mem_mb=need(
            "mem_mb", lambda wc: W.synthetic_need(W.plan.synthetic_jobs[wc.job])
        ),
        runtime=need(
            "runtime_min", lambda wc: W.synthetic_need(W.plan.synthetic_jobs[wc.job])
        ),
    params:
        runs=lambda wc: W.plan.synthetic_jobs[wc.job],
        job=lambda wc: wc.job,
        code=lambda wc: code(
            "train_synthetic.py", *W.train_modules(W.plan.synthetic_jobs[wc.job])
        ),
    script:
        "../scripts/train_synthetic.py"


checkpoint plan_refinement:
    """Plan the atlas's refinement and step-convergence jobs from its coarse runs: windows
    between the two coarse norms that bracket each transition of each (d, n) line."""
    input:
        runs=lambda wc: expand(
            paths.fill(paths.SYNTHETIC_JOB, table="runs"), job=W.coarse_jobs()
        ),
        curves=lambda wc: expand(
            paths.fill(paths.SYNTHETIC_JOB, table="curves"), job=W.coarse_jobs()
        ),
    output:
        paths.REFINEMENT_PLAN,
    log:
        "logs/synthetic/plan_refinement.log",
    priority: ATLAS_FIRST
    conda:
        "../envs/benign.yaml"
    params:
        job=lambda wc: W.refinement_job().params(),
        code=code("plan_refinement.py"),
    script:
        "../scripts/plan_refinement.py"


rule train_refinement:
    """One refinement or step-convergence job: the new runs of some (d, n, seed) lines, as one
    batched program. Its runs reach it as params; the plan is an input only as ancient, so
    replanning the same runs reruns nothing."""
    input:
        ancient(paths.REFINEMENT_PLAN),
    output:
        **paths.tables(paths.REFINEMENT_JOB),
    log:
        "logs/synthetic/train_{rjob}.log",
    priority: ATLAS_FIRST
    conda:
        "../envs/benign.yaml"
    resources:
        gpu=W.gpu,
        mem_mb=need(
            "mem_mb",
            lambda wc: W.synthetic_need(refinement_jobs(W.fits["model"])[wc.rjob]),
        ),
        runtime=need(
            "runtime_min",
            lambda wc: W.synthetic_need(refinement_jobs(W.fits["model"])[wc.rjob]),
        ),
    params:
        runs=lambda wc: refinement_jobs(W.fits["model"])[wc.rjob],
        job=lambda wc: wc.rjob,
        code=lambda wc: code(
            "train_synthetic.py",
            *W.train_modules(refinement_jobs(W.fits["model"])[wc.rjob]),
        ),
    script:
        "../scripts/train_synthetic.py"


rule aggregate_synthetic:
    """Concatenate one model's job tables; assign regimes with the configured thresholds."""
    input:
        runs=lambda wc: job_tables(wc.model, "runs"),
        curves=lambda wc: job_tables(wc.model, "curves"),
        attention=lambda wc: job_tables(wc.model, "attention"),
    output:
        **paths.tables(paths.SYNTHETIC),
    log:
        "logs/synthetic/aggregate_{model}.log",
    group:
        W.plan.cluster.group
    conda:
        "../envs/benign.yaml"
    params:
        regime=W.synthetic["regime"],
        code=code("aggregate_synthetic.py"),
    script:
        "../scripts/aggregate_synthetic.py"


rule aggregate_sweep:
    """Concatenate one sweep's job tables (with its refinement's) as aggregate_synthetic does a
    model's: what the atlas's artifacts read, so that they wait for the atlas's jobs alone.
    """
    input:
        runs=lambda wc: sweep_tables(wc.model, wc.sweep, "runs"),
        curves=lambda wc: sweep_tables(wc.model, wc.sweep, "curves"),
    output:
        **paths.tables(paths.SWEEP, names=paths.SWEEP_TABLES),
    log:
        "logs/synthetic/aggregate_{model}_{sweep}.log",
    group:
        W.plan.cluster.group
    conda:
        "../envs/benign.yaml"
    params:
        regime=W.synthetic["regime"],
        code=code("aggregate_synthetic.py"),
    script:
        "../scripts/aggregate_synthetic.py"


rule token_projection_points:
    """Figure 1's data: the token each input selects under a hand-set query (no training)."""
    output:
        paths.TOKEN_PROJECTION,
    log:
        "logs/synthetic/token_projection.log",
    group:
        W.plan.cluster.group
    conda:
        "../envs/benign.yaml"
    params:
        projection=W.synthetic["projection"],
        code=code("token_projection.py"),
    script:
        "../scripts/token_projection.py"
