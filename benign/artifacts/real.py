"""The real-data half of the artifact table: Tables 2 and 6, Figures 8 and 9 and the dynamics,
each entry holding its function (its input kinds are in real_inputs.py). It imports no
synthetic module, so no synthetic edit re-renders these."""

from __future__ import annotations

from benign.artifacts import real_inputs
from benign.artifacts.entry import Artifact, File, FromPlan, Key, Value, View, entries
from benign.artifacts.real_inputs import KINDS
from benign.figures import real as real_figures
from benign.tables import real, real_dynamics


def has_real(plan) -> bool:
    """real.use: data sets with runs to train (benign.plan.load.Plan)."""
    return bool(plan.real_cells)


def real_notes(plan) -> dict:
    """Per data set the runs use, its catalogue note: a sentence for the real tables' header."""
    real = plan.config.real
    return {name: real.datasets[name].get("note") for name in (real.use if plan.real_cells else [])}


# Tables 2 and 6: the real runs of the main grid, the paper's numbers, the data sets' notes
REAL_TABLE = dict(section="Real data", when=has_real, caption="real_table", function=real.real_results,
                  inputs={"real_runs": KINDS["real_runs"](), "reference_csv": File("benign/tables/reference/table6.csv"),
                          "summary_csv": File("benign/tables/reference/table2_summary.csv")},
                  view=View(real.grid_view, reads=("real_runs",), gives=("real_runs",), params={"grid": Key("real.grid")}))  # fmt: skip

ENTRIES = entries(
    __name__,
    real_inputs.__name__,
    Artifact("real_eta0.1", "table", "Table 2", "real data, eta = 0.1: train loss, test accuracy, baseline",
             params={"etas": Value([0.1]), "notes": FromPlan(real_notes)}, **REAL_TABLE),
    Artifact("real_eta0_0.2", "table", "Table 6", "real data, eta = 0 and 0.2, the paper's numbers beside",
             params={"etas": Value([0.0, 0.2]), "notes": FromPlan(real_notes)}, **REAL_TABLE),
    Artifact("real_eta_heatmap", "figure", "Figure 8", "real data: train and test loss over data sets x eta",
             "Real data", when=has_real, function=real_figures.real_eta_heatmap,
             inputs={"real_runs": KINDS["real_runs"]()}, params={"sweep": Key("real.eta_sweep")}),
    Artifact("real_attention_dynamics", "figure", "Figure 9", "real data: max attention from position 0 vs "
             "epoch", "Real data", when=has_real, function=real_figures.real_attention_dynamics,
             inputs={"real_runs": KINDS["real_runs"](), "real_attention": KINDS["real_attention"]()}, params={"grid": Key("real.grid")}),
    Artifact("real_test_dynamics", "figure", "", "real data: test accuracy over phase 2, with the epoch the "
             "noisy labels are memorised", "Real data", when=has_real, function=real_figures.real_test_dynamics,
             inputs={"real_curves": KINDS["real_curves"](), "real_runs": KINDS["real_runs"]()}, params={"grid": Key("real.grid")}),
    Artifact("real_dynamics", "table", "", "real data: peak and final test accuracy, memorising epoch, the cost "
             "of re-initialising query and key", "Tables", when=has_real, function=real_dynamics.real_dynamics,
             inputs={"real_runs": KINDS["real_runs"](), "real_curves": KINDS["real_curves"]()}, params={"grid": Key("real.grid")}),
)  # fmt: skip
