"""What every table shares (benign.tables.common): the seeds' mean and population spread, a
failed seed counted and never averaged away."""

import numpy as np
import pandas as pd
import pytest

from benign.tables import common as common_tables


def test_seed_stats_population_std():
    df = pd.DataFrame(
        {
            "k": ["a", "a", "a", "b", "b"],
            "v": [1.0, 2.0, 4.0, 3.0, np.nan],
            "status": ["ok", "ok", "ok", "ok", "diverged"],
        }
    )
    out = common_tables.seed_stats(df, ["k"], ["v"]).set_index("k")
    assert out.loc["a", "v_mean"] == pytest.approx(np.mean([1, 2, 4]))
    assert out.loc["a", "v_std"] == pytest.approx(np.std([1, 2, 4], ddof=0))
    assert (out.loc["a", "seeds"], out.loc["a", "failed"]) == (3, 0)
    assert (out.loc["b", "seeds"], out.loc["b", "failed"], out.loc["b", "v_std"]) == (1, 1, 0.0)
    nan_in_ok = common_tables.seed_stats(df.assign(status="ok"), ["k"], ["v"]).set_index("k")
    assert np.isnan(nan_in_ok.loc["b", "v_mean"])  # never averaged away
