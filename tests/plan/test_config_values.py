"""What the config's values mean (benign.plan.config_values), read the one way validation and
planning read them: each worked by hand."""

import pytest

from benign.plan import ConfigError
from benign.plan.config_values import excluded, grid, read, read_cluster, same_value, sweep_length
from benign.plan.resources import Cluster
from benign.synthetic import registry


def test_a_grid_is_a_list_or_a_range_with_its_stop_included():
    assert grid([3, 1, 2], "k") == [3, 1, 2]
    assert grid({"start": 20, "stop": 60, "step": 20}, "k") == [20, 40, 60]
    assert all(isinstance(v, int) for v in grid({"start": 20, "stop": 60, "step": 20}, "k"))
    assert grid({"start": 0.0, "stop": 0.2, "step": 0.1}, "k") == [0.0, 0.1, 0.2]  # 0.2 kept despite rounding
    assert grid({"start": 0.0, "stop": 0.25, "step": 0.1}, "k") == [0.0, 0.1, 0.2]
    assert grid({"start": 5, "stop": 10, "step": 2.5}, "k") == [5.0, 7.5, 10.0]  # a float step: floats
    with pytest.raises(ConfigError, match=r"real.grid.n: stop \(1\) is below start \(5\)"):
        grid({"start": 5, "stop": 1, "step": 1}, "real.grid.n")


def test_axis_values_are_the_same_number_whatever_their_type():
    assert same_value(20, 20.0) and same_value(0.1, 0.1 + 1e-12) and not same_value(0.1, 0.1001)
    assert same_value("flow", "flow") and not same_value("flow", 1.0)
    run = {"d": 40, "n": 10, "signal_norm": 3.0}
    assert excluded(run, [{"d": 20}, {"d": 40.0, "n": 10}])
    assert not excluded(run, [{"d": 40, "n": 6}]) and not excluded(run, [])


def test_a_sweeps_length_is_its_own_else_the_defaults():
    assert sweep_length({}, 1000) == {"steps": 1000, "log_every": 0, "log_points": 0}
    assert sweep_length({"steps": 10, "log_points": 5}, 1000) == {"steps": 10, "log_every": 0, "log_points": 5}


def _config(**over) -> dict:
    """A small config, worked by hand: the encoder alone, one sweep, a real-data block."""
    defaults = {"n": 20, "T": 8, "rho": 0.1, "eta": 0.2, "sigma": 1.0, "n_test": 1000, "lr": 0.005, "steps": 1000}
    sweep = {"axes": {"d": {"start": 250, "stop": 750, "step": 250}, "signal_norm": [5, 10]}, "seeds": [1, 2],
             "log_points": 9, "exclude": [{"d": 500}], "batches_per_job": 3}  # fmt: skip
    real = {
        "use": ["digits"],
        "datasets": {"digits": {"backbone": "b"}, "unused": {"backbone": "b"}},
        "backbones": {"b": {"kind": "k"}},
        "grid": {"n": [20, 200], "eta": {"start": 0.0, "stop": 0.2, "step": 0.1}, "seeds": [42]},
        "eta_sweep": {"n": 200, "seed": 42, "eta": {"start": 0.0, "stop": 0.3, "step": 0.1}},
        "protocol": {"finetune_epochs": 100, "record_epochs": [0, 10, 100]},
    }
    cfg = {"synthetic": {"defaults": defaults, "encoder": {"mlp_dim": 64, "sweeps": {"grid": sweep}}}, "real": real}
    cfg.update(over)
    return cfg


def test_a_config_is_read_once_into_its_values():
    config = read(_config(cluster={"device": "cuda", "max_runtime_min": "60"}))
    assert list(config.models) == ["encoder"]  # the registered models the config has a block for
    model = config.models["encoder"]
    base = model.base
    assert base["model"] == "encoder" and base["mlp_dim"] == 64 and base["n"] == 20 and base["steps"] == 1000
    assert set(registry.MODELS["encoder"].run_keys) <= set(base)
    sweep = model.sweeps["grid"]
    assert sweep.axes == {"d": [250, 500, 750], "signal_norm": [5, 10]}
    assert sweep.cells == [{"d": d, "signal_norm": m} for d in (250, 750) for m in (5, 10)]  # d 500 excluded
    assert (sweep.steps, sweep.log_every, sweep.log_points, sweep.batches_per_job) == (1000, 0, 9, 3)
    assert sweep.where == "config key synthetic.encoder.sweeps.grid" and sweep.snr_range is None
    assert config.cluster == Cluster("cuda", None, 60) and config.fits == {} and config.max_margin is None
    real = config.real
    assert real.ns == [20, 200] and real.etas == [0.0, 0.1, 0.2] and real.seeds == [42]
    assert real.eta_sweep == {"n": 200, "seed": 42, "etas": [0.0, 0.1, 0.2, 0.3]}
    assert real.use == ["digits"] and set(real.datasets) == {"digits", "unused"} and real.records == [0, 10, 100]
    assert read(_config(real=None)).real is None


def test_a_value_that_cannot_be_read_is_refused_naming_its_key():
    cfg = _config()
    cfg["synthetic"]["encoder"]["sweeps"]["grid"]["axes"]["d"] = {"start": 750, "stop": 250, "step": 250}
    with pytest.raises(ConfigError, match=r"synthetic.encoder.sweeps.grid.axes.d: stop \(250\) is below start"):
        read(cfg)
    cfg = _config()
    cfg["real"]["protocol"]["record_epochs"] = [0, 50, 20, 100]
    with pytest.raises(ConfigError, match="record_epochs"):
        read(cfg)


def test_the_cluster_block_is_read_from_strings_and_bad_values_refused():
    assert read_cluster({}) == Cluster("cpu", None, None)
    got = read_cluster({"cluster": {"device": "cuda", "max_mem_mb": "8000", "max_runtime_min": 60}})
    assert got == Cluster("cuda", 8000, 60)
    for block, words in [
        ({"device": "tpu"}, "cluster.device = 'tpu'"),
        ({"max_mem_mb": "lots"}, "cluster.max_mem_mb = 'lots'"),
        ({"max_runtime_min": -5}, "cluster.max_runtime_min = -5"),
        ({"memory": 1}, "cluster.memory is not known"),
    ]:
        with pytest.raises(ConfigError, match=words.replace(".", r"\.")):
            read_cluster({"cluster": block})
