"""The atlas's long-time limit, computed (docs/regimes.md#the-limit): on every line of the fitted
atlas, the attention-SVM direction of the W-frozen twin's selection and of the global one, and its
saturated softmax's labels.
"""


rule limit_atlas:
    """Every atlas line's t = infinity labels (W fixed at W0), refined about their crossings, and
    the global selection's kinds at each atlas run's data."""
    input:
        runs=lambda wc: fitted_tables("runs"),
    output:
        **paths.tables(paths.LIMIT, paths.LIMIT_TABLES),
    log:
        "logs/synthetic/limit_atlas.log",
    priority: ATLAS_FIRST
    group:
        W.plan.cluster.group
    conda:
        "../envs/benign.yaml"
    threads: 1  # beside the renders, which do not wait for it
    resources:
        mem_mb=need("mem_mb", lambda wc: W.limit_need()),
        runtime=need("runtime_min", lambda wc: W.limit_need()),
    params:
        settings=W.atlas_settings,
        regime=W.synthetic["regime"],
        resolution=W.limit_resolution,
        horizon=max(W.fits.get("horizons", [0])),
        code=code("limit_atlas.py"),
    script:
        "../scripts/limit_atlas.py"
