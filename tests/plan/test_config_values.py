"""What the config's values mean (benign.plan.config_values), read the one way validation and
planning read them: each worked by hand."""

import pytest

from benign.plan import ConfigError
from benign.plan.config_values import base_run, configured_models, excluded, grid, same_value, sweep_length
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


def test_a_models_runs_start_from_the_defaults_and_its_own_keys():
    defaults = {"n": 20, "T": 8, "rho": 0.1, "eta": 0.2, "sigma": 1.0, "n_test": 1000, "lr": 0.005, "steps": 1000}
    cfg = {"synthetic": {"defaults": defaults, "encoder": {"mlp_dim": 64}, "boundary_fits": {}}}
    assert configured_models(cfg) == ["encoder"]
    base = base_run(cfg, "encoder")
    assert base["model"] == "encoder" and base["mlp_dim"] == 64 and base["n"] == 20 and base["steps"] == 1000
    assert set(registry.MODELS["encoder"].run_keys) <= set(base)
