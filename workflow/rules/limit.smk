"""The atlas's long-time limit, computed (docs/regimes.md#the-limit): the attention-SVM direction of
the global selection on every line of the fitted atlas, its saturated softmax's labels."""


rule limit_atlas:
    """Every atlas line's t = infinity labels (W fixed at W0), refined about their crossings, and
    the global selection's kinds at each atlas run's data."""
    input:
        runs=lambda wc: expand(rules.aggregate_synthetic.output.runs, model=W.fits["model"]),
    output:
        **paths.tables(paths.LIMIT, paths.LIMIT_TABLES),
    log:
        "logs/synthetic/limit_atlas.log",
    conda:
        "../envs/benign.yaml"
    threads: 2
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        settings=W.constants["atlas_settings"],
        regime=W.synthetic["regime"],
        resolution=W.fits.get("resolution"),
        horizon=max(W.fits.get("horizons", [0])),
        code=code("limit_atlas.py"),
    script:
        "../scripts/limit_atlas.py"
