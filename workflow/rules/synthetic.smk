"""Synthetic half: train the token-selection model and the one-layer encoder, aggregate."""


rule train_synthetic:
    """One job trains many runs (a chunk of a sweep, or the named settings) as one batched program."""
    output:
        runs="results/synthetic/jobs/{job}/runs.parquet",
        curves="results/synthetic/jobs/{job}/curves.parquet",
        attention="results/synthetic/jobs/{job}/attention.parquet",
    log:
        "logs/synthetic/train_{job}.log",
    conda:
        "../envs/benign.yaml"
    resources:
        gpu=GPU,
        mem_mb=syn_need("mem_mb"),
        runtime=syn_need("runtime_min"),
    params:
        runs=lambda wc: SYN_JOBS[wc.job],
        code=lambda wc: train_code(wc.job),
    script:
        "../scripts/train_synthetic.py"


rule aggregate_synthetic:
    """Concatenate one model's job tables; assign regimes with the configured thresholds."""
    input:
        runs=lambda wc: expand(
            "results/synthetic/jobs/{job}/runs.parquet", job=jobs_of(wc.model)
        ),
        curves=lambda wc: expand(
            "results/synthetic/jobs/{job}/curves.parquet", job=jobs_of(wc.model)
        ),
        attention=lambda wc: expand(
            "results/synthetic/jobs/{job}/attention.parquet", job=jobs_of(wc.model)
        ),
    output:
        runs="results/synthetic/{model}/runs.parquet",
        curves="results/synthetic/{model}/curves.parquet",
        attention="results/synthetic/{model}/attention.parquet",
    log:
        "logs/synthetic/aggregate_{model}.log",
    conda:
        "../envs/benign.yaml"
    params:
        regime=SYN["regime"],
        milestones={**SYN["regime"], **SYN["generalization"]},
        code=code("aggregate_synthetic.py"),
    script:
        "../scripts/aggregate_synthetic.py"


rule token_projection_points:
    """Figure 1's data: the token each input selects under a hand-set query (no training)."""
    output:
        "results/synthetic/token_projection.parquet",
    log:
        "logs/synthetic/token_projection.log",
    conda:
        "../envs/benign.yaml"
    params:
        projection=SYN["projection"],
        code=code("token_projection.py"),
    script:
        "../scripts/token_projection.py"
