"""The workflow's plan, worked out from a checked config: what the rules loop over and every choice
they make.

The workflow (workflow/rules/common.smk) builds one :class:`WorkPlan` at parse time. Its jobs and
their needs, the settings the atlas's refinement adds, which artifacts are drawn (each by the
condition beside its entry, benign/artifacts/) and their params' values, the modules each job's
fingerprint holds and the wildcards' patterns are all answered here, where the tests can call them; the rules only add what Snakemake alone knows (a rule's
outputs, a checkpoint's file). Torch-free: every cluster job re-parses the workflow.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from benign.artifacts import entry as artifact_entry
from benign.artifacts import table as artifacts
from benign.artifacts.synthetic import atlas_settings
from benign.core import paths
from benign.plan import jobs, resources
from benign.plan import schema as config_schema
from benign.plan.forecast import Forecast, forecast
from benign.plan.load import Plan, load
from benign.plan.refinement_job import RefinementJob, convergence_setting, refine_setting
from benign.real import registry as real_registry
from benign.synthetic import registry


@dataclass(frozen=True)
class WorkPlan:
    """A checked config (its schema's defaults filled in) and its jobs (benign.plan.load.Plan)."""

    config: dict
    plan: Plan

    @classmethod
    def load(cls, config: dict, schema_path: str | Path) -> WorkPlan:
        """Check ``config`` and plan it (benign.plan.ConfigError naming the key otherwise), then
        check every entry of the artifact table against its function (ValueError otherwise)."""
        work = cls(config, load(config, schema_path))
        artifacts.check(schema=config_schema.load(schema_path))
        return work

    # --- what the config holds -----------------------------------------------------------
    @property
    def synthetic(self) -> dict:
        return self.config["synthetic"]

    @property
    def fits(self) -> dict:
        """``synthetic.boundary_fits`` ({} without the atlas's tables)."""
        return self.synthetic.get("boundary_fits", {})

    @property
    def refine(self) -> dict | None:
        return self.fits.get("refine")

    @property
    def convergence(self) -> dict | None:
        return self.fits.get("convergence")

    @property
    def refine_setting(self) -> str | None:
        return refine_setting(self.refine["sweep"]) if self.refine else None

    @property
    def convergence_setting(self) -> str | None:
        return convergence_setting(self.refine["sweep"]) if self.convergence else None

    @property
    def models(self) -> list[str]:
        """The registered models the config has a ``synthetic.<model>`` block for, in registry order."""
        return list(self.plan.config.models)

    @property
    def datasets(self) -> list[str]:
        """The data sets a run uses: ``real.use`` picks from the catalogue ``real.datasets``."""
        return self.plan.config.real.use if self.plan.config.real else []

    @property
    def gpu(self) -> int:
        """The training rules' ``gpu`` resource."""
        return int(self.plan.cluster.device == "cuda")

    # --- jobs ----------------------------------------------------------------------------
    def jobs_of(self, model: str) -> list[str]:
        return [job for job, runs in self.plan.synthetic_jobs.items() if runs[0]["model"] == model]

    def sweep_jobs(self, model: str, *sweeps: str) -> list[str]:
        """The jobs of ``model`` holding runs of any of ``sweeps``, in the model's order (a job's
        runs can serve several sweeps: each run is trained once)."""
        return [job for job in self.jobs_of(model) if any(set(sweeps) & set(run["sweeps"]) for run in self.plan.synthetic_jobs[job])]  # fmt: skip

    def coarse_jobs(self) -> list[str]:
        """The jobs holding runs of the refined sweep (read by the refinement's planner)."""
        return self.sweep_jobs(self.fits["model"], self.refine["sweep"])

    @property
    def limit_resolution(self) -> float | None:
        """The factor in ||mu|| the limit's crossings are refined to (benign.synthetic.svm_limit): a
        quarter of the atlas's resolution in ln, so that what the limit's tables set against the
        atlas's crossings is known finer than they are (the limit costs little beside the runs)."""
        resolution = self.fits.get("resolution")
        return resolution**0.25 if resolution else None

    @cached_property
    def fitted_jobs(self) -> list[str]:
        """The jobs holding runs of the fitted sweeps (what the limit reads, beside the refinement's)."""
        return self.sweep_jobs(self.fits.get("model", ""), *self.fits.get("sweeps", []))

    def synthetic_priority(self, job: str, first: int, below: int) -> int:
        """A synthetic training job's Snakemake priority: ``first`` for the fitted atlas's jobs
        (their chain reads itself in turn: started late, it would leave a core working alone at
        the end), else 1 to ``below`` - 1 by the job's forecast time, the longest first (in bins
        of 10 s): the last jobs to start are short ones, so no long one runs alone at the end."""
        if job in self.fitted_jobs:
            return first
        seconds = self.synthetic_need(self.plan.synthetic_jobs[job]).seconds
        return 1 + min(below - 2, int(seconds // 10))

    def refines(self, model: str) -> bool:
        """Whether ``model``'s atlas is refined (it then has refinement jobs)."""
        return bool(self.refine) and model == self.fits["model"]

    def refinement_prefixes(self) -> list[str]:
        """The ids of the refinement's and the step check's jobs, before their number."""
        model = self.fits.get("model", "none")
        return [jobs.job_prefix(model, str(setting)) for setting in (self.refine_setting, self.convergence_setting)]

    def refinement_log_points(self) -> int:
        """The log points of the refined sweep, which its refinement runs keep."""
        return self.plan.config.models[self.fits["model"]].sweeps[self.refine["sweep"]].log_points

    def refinement_job(self) -> RefinementJob:
        """The refinement checkpoint's job (its params: :meth:`RefinementJob.params`)."""
        cluster = self.plan.cluster
        return RefinementJob(
            horizons=sorted({*self.fits["horizons"], *(self.fits.get("along_time") or ())}),
            fit_horizon=max(self.fits["horizons"]),
            refine=self.refine,
            convergence=self.convergence,
            regime=self.synthetic["regime"],
            log_points=self.refinement_log_points(),
            settings=[self.refine_setting, self.convergence_setting],
            prefixes=self.refinement_prefixes(),
            cluster={
                "device": cluster.device,
                "max_mem_mb": cluster.max_mem_mb,
                "max_runtime_min": cluster.max_runtime_min,
            },
        )

    def synthetic_need(self, runs: list[dict]) -> resources.Need:
        """A synthetic training job's need, from its runs (planned or refinement)."""
        return resources.synthetic_job_need(runs, self.plan.cluster.device)

    def limit_need(self) -> resources.Need:
        """The limit job's need: one line per (d, n) of the fitted sweeps' runs and seed of those
        runs or of the refinement (what benign.synthetic.svm_limit evaluates)."""
        runs = [r for job in self.jobs_of(self.fits.get("model", "")) for r in self.plan.synthetic_jobs[job]
                if set(r["sweeps"]) & set(self.fits.get("sweeps", []))]  # fmt: skip
        seeds = {*(self.refine or {}).get("seeds", []), *(r["seed"] for r in runs)}
        cells = {(r["d"], r["n"], r["T"], r["n_test"]) for r in runs}
        lines = [{"n": n, "T": T, "n_test": n_test} for (_, n, T, n_test) in cells for _ in seeds]
        return resources.limit_need(lines)

    def forecast(self, every: bool = False, outputs: Collection[str] | None = None) -> Forecast:
        """What this run has to compute (benign.plan.forecast): the jobs with an output among
        ``outputs`` (the run's jobs, as Snakemake scheduled them), else those whose outputs are
        missing (``every``: all of them); the refinement as planned once its plan exists."""
        plan_file = Path(paths.REFINEMENT_PLAN)
        refinement = json.loads(plan_file.read_text()) if self.refine and plan_file.is_file() else None
        if refinement is not None and not all(job.startswith(tuple(self.refinement_prefixes())) for job in refinement):
            refinement = None  # another config's plan, left in this directory: estimated as if unplanned
        output = {
            "synthetic": lambda job: paths.fill(paths.SYNTHETIC_JOB, job=job, table="runs"),
            "refinement": lambda job: (
                paths.fill(paths.REFINEMENT_JOB, rjob=job, table="runs") if job else paths.REFINEMENT_PLAN
            ),  # "": the refinement to be planned
            "max_margin": lambda model: paths.fill(paths.MAX_MARGIN, max_margin_model=model),
            "limit": lambda _: paths.fill(paths.LIMIT, table=paths.LIMIT_TABLES[0]),
            "features": lambda name: self.feature_files(name)[-1],
            "pretrain": lambda name: paths.fill(paths.HEADS, dataset=name),
            "train": lambda cell: paths.fill(paths.REAL_JOB, cell=cell, table="runs"),
        }
        if every:
            pending = None
        elif outputs is not None:
            scheduled = {os.path.normpath(str(f)) for f in outputs}
            # Before the refinement's checkpoint has run, the DAG holds only the jobs it needs: the
            # fitted model's other jobs reach it after the checkpoint, so their missing outputs count
            hidden = os.path.normpath(paths.REFINEMENT_PLAN) in scheduled
            fitted = set(self.jobs_of(self.fits["model"])) if hidden else set()

            def pending(kind: str, key: str) -> bool:
                path = output[kind](key)
                if os.path.normpath(path) in scheduled:
                    return True
                return (
                    (kind == "limit" or (kind == "synthetic" and key in fitted)) and hidden and not Path(path).exists()
                )
        else:
            pending = lambda kind, key: not Path(output[kind](key)).exists()
        limit = self.limit_need() if self.fits.get("model") else None
        return forecast(self.plan, self.fits, refinement, limit, pending)

    def real_need(self, rule: str, value: str) -> resources.Need:
        """A real-data job's need: its rule's at the value of its wildcard."""
        return self.plan.real_needs[rule][value]

    def wildcard_constraints(self) -> dict[str, str]:
        """Each wildcard's pattern: one of the planned values."""
        return {
            "job": "|".join(self.plan.synthetic_jobs),
            "model": "|".join(self.models),
            "sweep": "|".join(sorted({sweep for model in self.plan.config.models.values() for sweep in model.sweeps}))
            or "none",
            "cell": "|".join(self.plan.real_cells) or "none",
            "dataset": "|".join(self.datasets) or "none",
            "part": "[0-9]+",
            "max_margin_model": "|".join(self.plan.max_margin_runs) or "none",
            "rjob": f"({'|'.join(self.refinement_prefixes())})_[0-9]+",
            "parts": "[0-9]+",
        }

    # --- fingerprints: the modules a job's script picks by name ----------------------------
    def train_modules(self, runs: list[dict]) -> list[str]:
        """The modules of the models of a training job's runs."""
        return sorted({registry.MODELS[run["model"]].module for run in runs})

    def features_module(self, dataset: str) -> str:
        """The module that loads a data set's backbone (benign.real.registry.BACKBONE_KINDS)."""
        return real_registry.BACKBONE_KINDS[self.backbone(dataset)["kind"]].module

    # --- the real half's entries -----------------------------------------------------------
    def feature_files(self, dataset: str) -> list[str]:
        """The parts of a data set's feature cache (rule features_real)."""
        parts = self.plan.feature_parts[dataset]
        return [paths.fill(paths.FEATURES, dataset=dataset, part=k, parts=parts) for k in range(parts)]

    def feature_rows(self, dataset: str) -> tuple[int, list[int]]:
        """The rows of a data set's features the cells read, and its seeds (benign.plan.jobs)."""
        return jobs.real_feature_rows(self.plan.real_cells, dataset)

    def dataset_entry(self, name: str) -> dict:
        """A data set's config entry as the library takes it (with its name; without its ``note``,
        which only the tables print, so editing it reruns no training)."""
        entry = {k: v for k, v in self.config["real"]["datasets"][name].items() if k != "note"}
        return {**entry, "name": name}

    def backbone(self, dataset: str) -> dict:
        name = self.config["real"]["datasets"][dataset]["backbone"]
        return {**self.config["real"]["backbones"][name], "name": name}

    # --- artifacts -----------------------------------------------------------------------
    def built(self, art: artifact_entry.Artifact, model: str | None = None) -> bool:
        """Whether the config asks for an artifact, a per-model one of ``model``."""
        models = self.models if model is None else [model] if model in self.models else []
        if not models or art.when is None:
            return bool(models)
        if art.models:  # a per-model condition
            return any(art.when(plan=self.plan, model=m) for m in models)
        return art.when(plan=self.plan)

    def drawn(self) -> list[tuple[artifact_entry.Artifact, str | None]]:
        """(artifact, model) for every artifact the config asks for: a per-model one once for each
        configured model it is built for, any other with model None."""
        return [
            (art, model)
            for art in artifacts.ARTIFACTS.values()
            for model in (self.models if art.models else [None])
            if self.built(art, model)
        ]

    def outputs(self, summary: str) -> list[str]:
        """Every artifact the config asks for, each in both of its formats, and the summary."""
        return [f for art, model in self.drawn() for f in art.files(model)] + [summary]

    @property
    def atlas_settings(self) -> list[str]:
        """The settings of the fitted atlas's runs (benign.artifacts.synthetic.atlas_settings)."""
        return atlas_settings(self.plan)

    def params(self, params: dict, model: str | None = None) -> dict:
        """The values of an artifact's (or its view's) params (benign.artifacts.entry.param_value)."""
        return {name: artifact_entry.param_value(self.plan, spec, model) for name, spec in params.items()}

    def input_files(self, spec, model: str | None, expand) -> str | list[str]:
        """The files an artifact input names (benign.artifacts.entry.Input): a File's path, or its
        kind's path, for the models a per-model kind names (ALL, FITS, MODEL or a model), for the
        fitted sweeps or the named one (a SweepOf) where the kind is per sweep, or ``expand``ed
        over the values of the wildcard a kind spans; [] for a kind read only where an atlas is
        fitted, where the config fits none, or not this model's."""
        if isinstance(spec, artifact_entry.File):
            return spec.path
        kind, of = spec.kind, spec.of
        if kind.per_sweep:
            if isinstance(of, artifact_entry.SweepOf):
                return [paths.fill(kind.path, model=of.model, sweep=of.sweep)]
            model = self.fits.get("model")
            return [paths.fill(kind.path, model=model, sweep=sweep) for sweep in self.fits.get("sweeps", [])]
        if kind.model_only and not (self.fits and (of != artifact_entry.MODEL or model == self.fits["model"])):
            return []
        if kind.per_model:
            whose = {artifact_entry.ALL: self.models, artifact_entry.FITS: [self.fits.get("model")],
                     artifact_entry.MODEL: [model]}  # fmt: skip
            return [paths.fill(kind.path, model=m) for m in whose.get(of, [of])]
        if kind.expand:
            return expand(kind.path, **{kind.expand: self.spanned(kind.expand)})
        return kind.path

    def spanned(self, wildcard: str) -> list[str]:
        """The values of a wildcard that an input kind spans (benign.artifacts.entry.InputKind.expand)."""
        return {"max_margin_model": list(self.plan.max_margin_runs)}[wildcard]
