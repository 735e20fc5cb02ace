"""Synthetic half: train the token-selection model and the one-layer encoder, aggregate."""


rule train_synthetic:
    """One job trains many runs (a chunk of a sweep, or the named settings) as one batched program."""
    output:
        **paths.tables(paths.SYNTHETIC_JOB),
    log:
        "logs/synthetic/train_{job}.log",
    conda:
        "../envs/benign.yaml"
    resources:
        gpu=GPU,
        mem_mb=need("mem_mb", synthetic_job),
        runtime=need("runtime_min", synthetic_job),
    params:
        runs=lambda wc: SYN_JOBS[wc.job],
        job=lambda wc: wc.job,
        code=lambda wc: train_code(wc.job),
    script:
        "../scripts/train_synthetic.py"


checkpoint plan_refinement:
    """Plan the atlas's refinement and step-convergence jobs from its coarse runs: windows
    between the two coarse norms that bracket each transition of each (d, n) line."""
    input:
        runs=lambda wc: expand(
            paths.fill(paths.SYNTHETIC_JOB, table="runs"), job=coarse_jobs()
        ),
        curves=lambda wc: expand(
            paths.fill(paths.SYNTHETIC_JOB, table="curves"), job=coarse_jobs()
        ),
    output:
        paths.REFINEMENT_PLAN,
    log:
        "logs/synthetic/plan_refinement.log",
    conda:
        "../envs/benign.yaml"
    params:
        refine=REFINE,
        convergence=CONVERGENCE,
        horizons=FITS.get("horizons"),
        along_time=FITS.get("along_time"),
        regime=SYN["regime"],
        settings=[REFINE_SETTING, CONVERGENCE_SETTING],
        model=FITS.get("model"),
        cluster=CLUSTER,
        log_points=lambda wc: cv.sweep_length(
            SYN[FITS["model"]]["sweeps"][REFINE["sweep"]], SYN["defaults"]["steps"]
        )["log_points"],
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
    conda:
        "../envs/benign.yaml"
    resources:
        gpu=GPU,
        mem_mb=need("mem_mb", refinement_job),
        runtime=need("runtime_min", refinement_job),
    params:
        runs=lambda wc: refinement_jobs(FITS["model"])[wc.rjob],
        job=lambda wc: wc.rjob,
        code=lambda wc: code(
            "train_synthetic.py", registry.MODELS[FITS["model"]].module
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
        SHORT
    conda:
        "../envs/benign.yaml"
    params:
        regime=SYN["regime"],
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
        SHORT
    conda:
        "../envs/benign.yaml"
    params:
        projection=SYN["projection"],
        code=code("token_projection.py"),
    script:
        "../scripts/token_projection.py"
