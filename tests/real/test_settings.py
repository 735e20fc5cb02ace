"""The real-data protocol's defaults (benign.real.settings), one owner: the paper's numbers, as the
default config, the schema and the library's functions give them."""

from benign.real.settings import PROTOCOL

# The paper's real-data protocol as the authors' code runs it (docs/real_protocol.md), typed here
# apart from benign/real/settings.py; the progress interval and recorded epochs are the project's.
PAPER_PROTOCOL = {"pretrain_epochs": 300, "finetune_epochs": 2000, "lr": 5e-5, "batch_size": 16, "clip": 1.0}


def test_the_real_protocols_defaults_are_the_papers_in_the_schema_and_the_code():
    """The default config's real.protocol and the library's function defaults are the paper's
    numbers (an independent copy above); the schema's defaults are the project's own log interval
    and recorded epochs."""
    import inspect

    import yaml

    from benign.plan.schema import default
    from benign.real import protocol
    from benign.real.loop import TrainConfig
    from tests.helpers.workflow_utils import ROOT

    given = yaml.safe_load((ROOT / "config/config.yaml").read_text())["real"]["protocol"]
    for key, value in PAPER_PROTOCOL.items():  # the default config gives each; the schema has no default
        assert given[key] == value and default(f"real.protocol.{key}") is None, key
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
    assert {k: PROTOCOL[k] for k in PAPER_PROTOCOL} == PAPER_PROTOCOL
