"""The figure and table rules generated from the artifact table (benign/config/artifacts.py):
one rule per artifact, drawn by workflow/scripts/render.py."""

# the tables first: the figures that read a table name its rule's output
for art in sorted(
    (a for a in artifacts.generated() if built(a)), key=lambda a: a.kind != "table"
):

    rule:
        name:
            art.rule
        input:
            **{name: artifact_input(spec) for name, spec in art.inputs.items()},
        output:
            report(
                f"{art.folder}/{art.name}{art.extensions[0]}",
                caption=f"../report/{art.name}.rst",
                category=art.section,
            ),
            f"{art.folder}/{art.name}{art.extensions[1]}",
        log:
            f"logs/{art.kind}s/{art.name}.log",
        conda:
            "../envs/benign.yaml"
        params:
            artifact=art.name,
            args=artifact_params(art.params),
            view=artifact_params(art.view_params),
            code=code(
                "render.py",
                *{f.partition(":")[0] for f in (art.function, art.view) if f},
            ),
        script:
            "../scripts/render.py"


rule summary:
    """results/summary.md: every table's numbers beside their artifact (benign/tables/summary.py)."""
    input:
        tables=[
            f"{a.folder}/{a.name}.csv"
            for a in artifacts.ARTIFACTS.values()
            if a.kind == "table" and built(a)
        ],
        synthetic_runs=expand(rules.aggregate_synthetic.output.runs, model=MODELS),
        real_runs=rules.aggregate_real.output.runs if REAL_CELLS else [],
    output:
        report(
            "results/summary.md", caption="../report/summary.rst", category="Summary"
        ),
    log:
        "logs/summary.log",
    conda:
        "../envs/benign.yaml"
    params:
        configfiles=[str(f) for f in workflow.configfiles],
        code=code("summary.py"),
    script:
        "../scripts/summary.py"
