"""The attention-SVM check (docs/max_margin.md): the trained direction against the max-margin
direction of the tokens it selects (Tarzanagh et al. 2023), and its figure and table."""


rule train_max_margin:
    """One model's runs of the max_margin block, batched by (d, seed), 10^5 steps each."""
    output:
        paths.MAX_MARGIN,
    log:
        "logs/max_margin/train_{max_margin_model}.log",
    conda:
        "../envs/benign.yaml"
    resources:
        mem_mb=need(
            "mem_mb",
            lambda wc: W.synthetic_need(W.plan.max_margin_runs[wc.max_margin_model]),
        ),
        runtime=need(
            "runtime_min",
            lambda wc: W.synthetic_need(W.plan.max_margin_runs[wc.max_margin_model]),
        ),
    params:
        runs=lambda wc: W.plan.max_margin_runs[wc.max_margin_model],
        log_points=lambda wc: config["max_margin"]["log_points"],
        code=code("train_max_margin.py"),
    script:
        "../scripts/train_max_margin.py"
