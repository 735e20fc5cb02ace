"""Reproduce every figure and table of "Benign Overfitting in Token Selection of Attention Mechanism"."""


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/synthetic.smk"
include: "workflow/rules/real.smk"
include: "workflow/rules/max_margin.smk"
include: "workflow/rules/limit.smk"
include: "workflow/rules/render.smk"


onstart:
    # What the run will cost, before its jobs start (benign/plan/forecast.py); never a reason to stop.
    try:
        # a cluster's jobs: core time only
        cores = workflow.cores if workflow.local_exec else None
        scheduled = [f for job in workflow.dag.needrun_jobs() for f in job.output]
        logger.info(W.forecast(outputs=scheduled).text(cores))
    except Exception as err:  # noqa: BLE001
        logger.warning(f"no forecast: {err}")


onsuccess:
    # Every job of this run has its outputs: the training state they came from is no longer needed.
    job_state.release()


rule all:
    default_target: True
    input:
        W.outputs(paths.SUMMARY),
