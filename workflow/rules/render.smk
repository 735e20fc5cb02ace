"""The figure and table rules generated from the artifact table (benign/artifacts/):
one per artifact (per model for a per-model one), run by workflow/scripts/render.py."""

# the tables first: the figures that read a table name its rule's output
for art, model in sorted(W.drawn(), key=lambda am: am[0].kind != "table"):

    rule:
        name:
            art.rule(model)
        input:
            **{name: artifact_input(spec, model) for name, spec in art.inputs.items()},
        output:
            report(
                art.files(model)[0],
                caption=f"../report/{art.caption or art.name}.rst",
                category=art.section,
            ),
            art.files(model)[1],
        log:
            f"logs/{art.kind}s/{art.stem(model)}.log",
        group:
            W.plan.cluster.group
        conda:
            "../envs/benign.yaml"
        params:
            recipe=art.recipe(),  # an edit to the entry reruns this artifact alone
            extension=art.extensions[0],
            args=W.params(art.params, model),
            view=W.params(art.view.params if art.view else {}, model),
            code=code("render.py", *art.modules, art.kinds),
        script:
            "../scripts/render.py"


rule summary:
    """results/summary.md: every table's numbers beside their artifact (benign/tables/summary.py)."""
    input:
        tables=[a.files(model)[0] for a, model in W.drawn() if a.kind == "table"],
        job_runs=lambda wc: training_runs(),
    output:
        report(paths.SUMMARY, caption="../report/summary.rst", category="Summary"),
    log:
        "logs/summary.log",
    group:
        W.plan.cluster.group
    conda:
        "../envs/benign.yaml"
    params:
        configfiles=[str(f) for f in workflow.configfiles],
        forecast=lambda wc: W.forecast(every=True).training_parts(),  # the refinement as planned
        code=code("summary.py"),
    script:
        "../scripts/summary.py"
