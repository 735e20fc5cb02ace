"""The attention-SVM check (docs/max_margin.md): the trained direction against the max-margin
direction of the tokens it selects (Tarzanagh et al. 2023), and its figure and table."""


rule train_max_margin:
    """One model's runs of the max_margin block, batched by (d, seed), 10^5 steps each."""
    output:
        "results/max_margin/{svm_model}.parquet",
    log:
        "logs/max_margin/train_{svm_model}.log",
    conda:
        "../envs/benign.yaml"
    resources:
        mem_mb=mm_need("mem_mb"),
        runtime=mm_need("runtime_min"),
    params:
        runs=lambda wc: MM_RUNS[wc.svm_model],
        log_points=lambda wc: config["max_margin"]["log_points"],
        code=code("train_max_margin.py"),
    script:
        "../scripts/train_max_margin.py"


rule table_max_margin:
    input:
        expand("results/max_margin/{svm_model}.parquet", svm_model=MM_RUNS),
    output:
        csv=report(
            "results/tables/max_margin.csv",
            caption="../report/max_margin.rst",
            category="Tables",
        ),
        md="results/tables/max_margin.md",
    log:
        "logs/tables/max_margin.log",
    conda:
        "../envs/benign.yaml"
    params:
        horizons=lambda wc: config["max_margin"]["horizons"],
        code=code("table_max_margin.py"),
    script:
        "../scripts/table_max_margin.py"


rule figure_max_margin_alignment:
    input:
        expand("results/max_margin/{svm_model}.parquet", svm_model=MM_RUNS),
    output:
        png=report(
            "results/figures/max_margin_alignment.png",
            caption="../report/max_margin_alignment.rst",
            category="Figures",
        ),
        pdf="results/figures/max_margin_alignment.pdf",
    log:
        "logs/figures/max_margin_alignment.log",
    conda:
        "../envs/benign.yaml"
    params:
        code=code("figure_max_margin_alignment.py"),
    script:
        "../scripts/figure_max_margin_alignment.py"
