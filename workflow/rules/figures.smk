"""Render every synthetic artifact: one rule per figure or table, PNG + PDF (CSV + Markdown)."""


rule figure_softmax_dynamics:
    input:
        runs=lambda wc: f"results/synthetic/{model_of(wc.softmax_dynamics)}/runs.parquet",
        attention=lambda wc: f"results/synthetic/{model_of(wc.softmax_dynamics)}/attention.parquet",
    output:
        png=report(
            "results/figures/{softmax_dynamics}.png",
            caption="../report/softmax_dynamics.rst",
            category="Synthetic",
        ),
        pdf="results/figures/{softmax_dynamics}.pdf",
    log:
        "logs/figures/{softmax_dynamics}.log",
    conda:
        "../envs/benign.yaml"
    params:
        model=lambda wc: model_of(wc.softmax_dynamics),
        code=code("figure_softmax_dynamics.py"),
    script:
        "../scripts/figure_softmax_dynamics.py"


rule figure_loss_heatmap:
    input:
        unpack(
            lambda wc: {
                "runs": f"results/synthetic/{model_of(wc.loss_heatmap)}/runs.parquet",
                **(
                    {"fits": rules.table_regime_boundaries.output[0]}
                    if FITS and model_of(wc.loss_heatmap) == FITS["model"]
                    else {}
                ),
            }
        ),
    output:
        png=report(
            "results/figures/{loss_heatmap}.png",
            caption="../report/loss_heatmap.rst",
            category="Synthetic",
        ),
        pdf="results/figures/{loss_heatmap}.pdf",
    log:
        "logs/figures/{loss_heatmap}.log",
    conda:
        "../envs/benign.yaml"
    params:
        model=lambda wc: model_of(wc.loss_heatmap),
        boundaries=SYN["boundaries"],
        code=code("figure_loss_heatmap.py"),
    script:
        "../scripts/figure_loss_heatmap.py"
