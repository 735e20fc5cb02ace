"""The pieces the long functions were split into, each on its own: the trainer's checkpoint or
stop, whether a run fits its model, a sweep's length and logging, a real cell's frames."""

from __future__ import annotations

import signal
from types import SimpleNamespace

import pytest
import torch

from benign.core import stopping
from benign.plan.validate import sweep_length
from benign.real.batched import RunResult
from benign.real.loop import Epoch
from benign.real.protocol import phase_two_frames
from benign.real.records import Record
from benign.real.schema import REAL_ATTENTION, REAL_CURVES, REAL_RUNS
from benign.synthetic import spec, trainer


class Model:
    def state(self) -> dict:
        return {"p": torch.zeros(2)}


def test_a_batch_saves_every_so_many_steps_and_on_a_stop_signal(tmp_path):
    path = tmp_path / "batch.pt"
    state = lambda step: (["run"], Model(), [], [], step, 1.5)  # noqa: E731
    trainer._checkpoint_or_stop(path, 10, state(7))
    assert not path.exists()  # not a multiple of 10
    trainer._checkpoint_or_stop(path, 10, state(20))
    assert trainer.load_checkpoint(path, "cpu")["step"] == 20
    trainer._checkpoint_or_stop(None, 10, state(30))  # no checkpoint asked for: nothing written
    stopping.STOP.signal = signal.SIGTERM
    try:
        with pytest.raises(stopping.Stopped):
            trainer._checkpoint_or_stop(path, 0, state(23))  # never periodically, but on the signal
    finally:
        stopping.STOP.signal = None
    assert trainer.load_checkpoint(path, "cpu")["step"] == 23


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({}, None),
        ({"model": "nope"}, "model"),
        ({"model": "encoder", "mlp_dim": 8, "engine": "gram"}, "engine"),
        ({"engine": "gram", "d": 300}, "d"),  # n 20, T 8: the Gram engine needs d >= 324
        ({"model": "encoder"}, "mlp_dim"),  # the encoder needs its MLP width
        ({"mlp_dim": 8}, "mlp_dim"),  # the token model has none
        ({"engine": "auto", "d": 300}, None),
    ],
)
def test_whether_a_run_fits_its_model(change, problem):
    run = {**spec.RunSpec().__dict__, **change}
    found = spec.model_problem(run)
    assert (found and found[0]) == problem, found


def test_a_sweep_trains_the_defaults_steps_and_logs_its_ends_unless_it_says():
    assert sweep_length({}, 500) == {"steps": 500, "log_every": 0, "log_points": 0}
    assert sweep_length({"steps": 80, "log_points": 9}, 500) == {"steps": 80, "log_every": 0, "log_points": 9}


def test_a_cells_frames_have_the_schemas_columns_and_one_row_per_run():
    records = [Record(epoch=e, test_loss=0.5, test_acc=0.9, train_acc_clean=1.0, train_acc_noisy=f)
               for e, f in ((0, 0.0), (5, 1.0))]  # fmt: skip
    result = RunResult([Epoch(1, 0.7, 0.8, 0.3), Epoch(2, 0.6, 0.9, 0.4)], 0.6, 0.9, 0.5, 0.88, records)
    batch = [
        SimpleNamespace(noisy=torch.tensor([True, False, True])),
        SimpleNamespace(noisy=torch.zeros(3, dtype=bool)),
    ]
    runs, attention, curves = phase_two_frames(("mnist", "vit", 20, 42), [0.2, 0.0], [result, result], batch,
                                               {"baseline_acc": 0.95}, (100.0, 0.0))  # fmt: skip
    assert list(runs.columns) == REAL_RUNS.names and list(attention.columns) == REAL_ATTENTION.names
    assert list(curves.columns) == REAL_CURVES.names
    assert list(runs["run_id"]) == ["mnist__vit__n20__eta0.200__seed42", "mnist__vit__n20__eta0.000__seed42"]
    assert list(runs["n_noisy"]) == [2, 0] and (runs["baseline_acc"] == 0.95).all()
    assert len(attention) == 4 and len(curves) == 4 and set(curves["eta"]) == {0.2, 0.0}


# The paper's real-data protocol as the authors' code runs it (docs/real_protocol.md), typed here
# apart from benign/real/settings.py; the progress interval and recorded epochs are the project's.
PAPER_PROTOCOL = {"pretrain_epochs": 300, "finetune_epochs": 2000, "lr": 5e-5, "batch_size": 16, "clip": 1.0}


def test_the_real_protocols_defaults_are_the_papers_in_the_schema_and_the_code():
    """The schema's defaults of real.protocol and the library's function defaults are the paper's
    numbers (an independent copy above), and the project's own log interval and recorded epochs."""
    import inspect

    from benign.plan.schema import default
    from benign.real import protocol
    from benign.real.loop import TrainConfig

    for key, value in PAPER_PROTOCOL.items():
        assert default(f"real.protocol.{key}") == value, key
    assert default("real.protocol.log_every") == TrainConfig(epochs=1).log_every == 10
    assert default("real.protocol.record_epochs") == 30
    pretrain = inspect.signature(protocol.pretrain).parameters
    finetune = inspect.signature(protocol.run_cell).parameters
    for key in ("lr", "batch_size", "clip"):
        assert pretrain[key].default == finetune[key].default == PAPER_PROTOCOL[key], key
    assert pretrain["pretrain_epochs"].default == PAPER_PROTOCOL["pretrain_epochs"]
    assert finetune["finetune_epochs"].default == PAPER_PROTOCOL["finetune_epochs"]
    assert pretrain["log_every"].default == finetune["log_every"].default == 10
    assert finetune["records"].default == 30


def test_every_summary_section_reads_a_table_of_the_artifact_table():
    from benign.artifacts.table import ARTIFACTS
    from benign.tables.summary import SECTIONS

    tables = {a.name for a in ARTIFACTS.values() if a.kind == "table"}
    assert {name for name, _, _ in SECTIONS} <= tables
    assert [h for _, h, _ in SECTIONS][:2] == ["Named settings", "The atlas's step check (step halved, steps doubled)"]
