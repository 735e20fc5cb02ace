"""Real-data half: fetch data sets, cache backbone features, train query/key under label noise.

Its jobs go first after the fitted atlas's chain (priority, workflow/rules/synthetic.smk): the
fine-tuning jobs are the workflow's longest, so starting them early leaves the many short
synthetic jobs to fill the cores at the end."""


rule fetch_dataset:
    """A verified local copy (data, meta.json, SHA256SUMS); everything downstream reads only this."""
    output:
        directory(paths.DATASET),
    log:
        "logs/real/fetch_{dataset}.log",
    priority: 50
    conda:
        "../envs/benign.yaml"
    params:
        entry=lambda wc: W.dataset_entry(wc.dataset),
        code=code("fetch_dataset.py"),
    script:
        "../scripts/fetch_dataset.py"


rule features_real:
    """Hidden states entering the backbone's final layer, computed once per (backbone, data set),
    in parts where one job would not fit the site's ceilings (docs/cluster.md)."""
    input:
        paths.DATASET,
    output:
        paths.FEATURES,
    log:
        "logs/real/features_{dataset}_part{part}-of-{parts}.log",
    priority: 50
    conda:
        "../envs/benign.yaml"
    resources:
        gpu=W.gpu,
        mem_mb=need("mem_mb", lambda wc: W.real_need("features", wc.dataset)),
        runtime=need("runtime_min", lambda wc: W.real_need("features", wc.dataset)),
    params:
        backbone=lambda wc: W.backbone(wc.dataset),
        rows=lambda wc: W.feature_rows(wc.dataset),
        pretrain_size=lambda wc: config["real"]["datasets"][wc.dataset]["pretrain_size"],
        part=lambda wc: (int(wc.part), int(wc.parts)),
        code=lambda wc: code("features_real.py", W.features_module(wc.dataset)),
    script:
        "../scripts/features_real.py"


rule pretrain_real:
    """Phase 1: the head of every seed of a data set, trained on its clean pretraining rows."""
    input:
        lambda wc: W.feature_files(wc.dataset),
    output:
        paths.HEADS,
    log:
        "logs/real/pretrain_{dataset}.log",
    priority: 50
    conda:
        "../envs/benign.yaml"
    resources:
        mem_mb=need("mem_mb", lambda wc: W.real_need("pretrain", wc.dataset)),
        runtime=need("runtime_min", lambda wc: W.real_need("pretrain", wc.dataset)),
    params:
        entry=lambda wc: W.dataset_entry(wc.dataset),
        seeds=lambda wc: W.feature_rows(wc.dataset)[1],
        protocol=lambda wc: config["real"]["protocol"],
        code=code("pretrain_real.py"),
    script:
        "../scripts/pretrain_real.py"


rule train_real:
    """Phase 2 for one (data set, seed, n) and every eta it needs, as one program."""
    input:
        features=lambda wc: W.feature_files(W.plan.real_cells[wc.cell]["dataset"]),
        heads=lambda wc: paths.fill(
            paths.HEADS, dataset=W.plan.real_cells[wc.cell]["dataset"]
        ),
    output:
        **paths.tables(paths.REAL_JOB),
    log:
        "logs/real/train_{cell}.log",
    priority: REAL_TRAINING
    conda:
        "../envs/benign.yaml"
    resources:
        gpu=W.gpu,
        mem_mb=need("mem_mb", lambda wc: W.real_need("train", wc.cell)),
        runtime=need("runtime_min", lambda wc: W.real_need("train", wc.cell)),
    params:
        cell=lambda wc: W.plan.real_cells[wc.cell],
        entry=lambda wc: W.dataset_entry(W.plan.real_cells[wc.cell]["dataset"]),
        protocol=lambda wc: config["real"]["protocol"],
        code=code("train_real.py"),
    script:
        "../scripts/train_real.py"


rule aggregate_real:
    input:
        **{
            table: expand(path, cell=W.plan.real_cells)
            for table, path in paths.tables(paths.REAL_JOB).items()
        },
    output:
        **paths.tables(paths.REAL),
    log:
        "logs/real/aggregate.log",
    group:
        W.plan.cluster.group
    conda:
        "../envs/benign.yaml"
    script:
        "../scripts/aggregate_real.py"
