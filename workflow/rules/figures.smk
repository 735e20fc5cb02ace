"""Render every synthetic artifact: one rule per figure or table, PNG + PDF (CSV + Markdown)."""


rule figure_token_projection:
    input:
        "results/synthetic/token_projection.parquet",
    output:
        png=report(
            "results/figures/token_projection.png",
            caption="../report/token_projection.rst",
            category="Synthetic",
        ),
        pdf="results/figures/token_projection.pdf",
    log:
        "logs/figures/token_projection.log",
    conda:
        "../envs/benign.yaml"
    params:
        projection=SYN["projection"],
        code=code("figure_token_projection.py"),
    script:
        "../scripts/figure_token_projection.py"


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
                    {"fits": "results/tables/regime_boundaries.csv"}
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


rule figure_delayed_generalization:
    input:
        runs="results/synthetic/token/runs.parquet",
        curves="results/synthetic/token/curves.parquet",
    output:
        png=report(
            "results/figures/delayed_generalization.png",
            caption="../report/delayed_generalization.rst",
            category="Synthetic",
        ),
        pdf="results/figures/delayed_generalization.pdf",
    log:
        "logs/figures/delayed_generalization.log",
    conda:
        "../envs/benign.yaml"
    params:
        loss_threshold=SYN["regime"]["loss_threshold"],
        code=code("figure_delayed_generalization.py"),
    script:
        "../scripts/figure_delayed_generalization.py"


rule table_synthetic_regimes:
    input:
        runs=expand("results/synthetic/{model}/runs.parquet", model=MODELS),
        curves=expand("results/synthetic/{model}/curves.parquet", model=MODELS),
    output:
        csv=report(
            "results/tables/synthetic_regimes.csv",
            caption="../report/synthetic_regimes.rst",
            category="Tables",
        ),
        md="results/tables/synthetic_regimes.md",
    log:
        "logs/tables/synthetic_regimes.log",
    conda:
        "../envs/benign.yaml"
    params:
        regime=SYN["regime"],
        horizons=SYN["regimes_table"]["horizons"],
        code=code("table_synthetic_regimes.py"),
    script:
        "../scripts/table_synthetic_regimes.py"


rule table_delay_scan:
    input:
        runs="results/synthetic/token/runs.parquet",
        curves="results/synthetic/token/curves.parquet",
    output:
        csv=report(
            "results/tables/delay_scan.csv",
            caption="../report/delay_scan.rst",
            category="Tables",
        ),
        md="results/tables/delay_scan.md",
    log:
        "logs/tables/delay_scan.log",
    conda:
        "../envs/benign.yaml"
    params:
        sweep=DELAY_SCAN,
        code=code("table_delay_scan.py"),
    script:
        "../scripts/table_delay_scan.py"


rule table_regime_boundaries:
    input:
        runs=f"results/synthetic/{FITS.get('model', 'token')}/runs.parquet",
        curves=f"results/synthetic/{FITS.get('model', 'token')}/curves.parquet",
    output:
        csv=report(
            "results/tables/regime_boundaries.csv",
            caption="../report/regime_boundaries.rst",
            category="Tables",
        ),
        md="results/tables/regime_boundaries.md",
    log:
        "logs/tables/regime_boundaries.log",
    conda:
        "../envs/benign.yaml"
    params:
        fits=FITS,
        settings=ATLAS_SETTINGS,
        regime=SYN["regime"],
        code=code("table_regime_boundaries.py"),
    script:
        "../scripts/table_regime_boundaries.py"


rule table_regime_model:
    input:
        runs=f"results/synthetic/{FITS.get('model', 'token')}/runs.parquet",
        curves=f"results/synthetic/{FITS.get('model', 'token')}/curves.parquet",
    output:
        csv=report(
            "results/tables/regime_model.csv",
            caption="../report/regime_model.rst",
            category="Tables",
        ),
        md="results/tables/regime_model.md",
    log:
        "logs/tables/regime_model.log",
    conda:
        "../envs/benign.yaml"
    params:
        fits=FITS,
        settings=ATLAS_SETTINGS,
        regime=SYN["regime"],
        code=code("table_regime_model.py"),
    script:
        "../scripts/table_regime_model.py"


rule table_generalization_times:
    input:
        runs=f"results/synthetic/{FITS.get('model', 'token')}/runs.parquet",
        curves=f"results/synthetic/{FITS.get('model', 'token')}/curves.parquet",
    output:
        csv=report(
            "results/tables/generalization_times.csv",
            caption="../report/generalization_times.rst",
            category="Tables",
        ),
        md="results/tables/generalization_times.md",
    log:
        "logs/tables/generalization_times.log",
    conda:
        "../envs/benign.yaml"
    params:
        fits=FITS,
        settings=ATLAS_SETTINGS,
        code=code("table_generalization_times.py"),
    script:
        "../scripts/table_generalization_times.py"


rule figure_regime_map:
    input:
        runs=f"results/synthetic/{FITS.get('model', 'token')}/runs.parquet",
        curves=f"results/synthetic/{FITS.get('model', 'token')}/curves.parquet",
        fits="results/tables/regime_boundaries.csv",
    output:
        png=report(
            "results/figures/regime_map.png",
            caption="../report/regime_map.rst",
            category="Synthetic",
        ),
        pdf="results/figures/regime_map.pdf",
    log:
        "logs/figures/regime_map.log",
    conda:
        "../envs/benign.yaml"
    params:
        fits=FITS,
        settings=ATLAS_SETTINGS,
        regime=SYN["regime"],
        code=code("figure_regime_map.py"),
    script:
        "../scripts/figure_regime_map.py"


rule figure_boundary_scaling:
    input:
        fits="results/tables/regime_boundaries.csv",
    output:
        png=report(
            "results/figures/boundary_scaling.png",
            caption="../report/boundary_scaling.rst",
            category="Synthetic",
        ),
        pdf="results/figures/boundary_scaling.pdf",
    log:
        "logs/figures/boundary_scaling.log",
    conda:
        "../envs/benign.yaml"
    params:
        code=code("figure_boundary_scaling.py"),
    script:
        "../scripts/figure_boundary_scaling.py"


rule figure_generalization_delay:
    input:
        runs=f"results/synthetic/{FITS.get('model', 'token')}/runs.parquet",
        curves=f"results/synthetic/{FITS.get('model', 'token')}/curves.parquet",
    output:
        png=report(
            "results/figures/generalization_delay.png",
            caption="../report/generalization_delay.rst",
            category="Synthetic",
        ),
        pdf="results/figures/generalization_delay.pdf",
    log:
        "logs/figures/generalization_delay.log",
    conda:
        "../envs/benign.yaml"
    params:
        fits=FITS,
        settings=ATLAS_SETTINGS,
        code=code("figure_generalization_delay.py"),
    script:
        "../scripts/figure_generalization_delay.py"
