"""The named settings' table (benign.tables.synthetic): final metrics and regime per setting, the
flipped labels' fit step, and the seeds' regimes at each horizon."""

import numpy as np
import pandas as pd
import pytest

from benign.analysis.theory import Criteria
from benign.plan.schema import default
from benign.tables import synthetic as synthetic_tables
from tests.helpers import frames

CRITERIA = Criteria(**default("synthetic.regime"))  # the config's default thresholds (its schema)
# setting: d, ||mu||, test accuracy, normalised test loss r (harmful: attention stays near uniform)
SETTINGS = {
    "harmful": (4500, 5.0, 0.6, 0.9),
    "benign": (2000, 20.0, 0.99, 0.2),
    "not_overfitting": (1000, 80.0, 1.0, 0.1),
}


def synthetic_runs():
    rows = []
    for model in ("encoder", "token"):
        for setting, (d, norm, test_acc, r) in SETTINGS.items():
            for seed in (1, 2, 3):
                rows.append(
                    dict(
                        model=model,
                        setting=setting,
                        d=d,
                        signal_norm=norm,
                        seed=seed,
                        train_loss=0.4 + seed / 100,
                        test_acc=test_acc - seed / 1000,
                        train_acc_noisy=0.0 if setting == "not_overfitting" else 1.0,
                        test_loss_normalised=r if model == "token" else np.nan,
                        test_sel_relevant=1.0 - r,
                    )
                )
    rows.append(
        dict(
            model="token",
            setting="benign",
            seed=4,
            status="diverged",
            regime=None,
            train_loss=np.nan,
            test_loss=np.nan,
            test_acc=np.nan,
        )
    )
    rows.append(dict(model="token", setting="heatmap", d=250, signal_norm=5.0))  # not a named setting
    return frames.runs(rows)


def test_synthetic_regimes(tmp_path):
    table = synthetic_tables.synthetic_regimes(synthetic_runs(), tmp_path / "regimes", criteria=CRITERIA)
    assert list(zip(table["model"], table["setting"])) == [(m, s) for m in ("token", "encoder") for s in SETTINGS]
    assert list(table["regime"]) == ["harmful", "benign", "not_overfitting"] * 2
    benign = table[(table["model"] == "token") & (table["setting"] == "benign")].iloc[0]
    assert (benign["seeds"], benign["failed"], benign["d"]) == (3, 1, 2000)
    assert benign["train_loss_mean"] == pytest.approx(np.mean([0.41, 0.42, 0.43]))
    assert benign["snr"] == pytest.approx(20 / np.sqrt(2000))
    csv = pd.read_csv(tmp_path / "regimes.csv")
    assert len(csv) == 6 and "train_acc_noisy_mean" in csv
    md = (tmp_path / "regimes.md").read_text()
    assert "| Benign overfitting |" in md and "3 (1 failed)" in md and "benign ×3" in md
    harmful = table[(table["model"] == "token") & (table["setting"] == "harmful")].iloc[0]
    assert harmful["seed_head_acc_regimes"] == "harmful ×3" and harmful["selection_labels_agree"] == "3 of 3"
    assert "Test r (normalised loss)" in md and "Head-accuracy label per seed" in md
    assert md.count("\n|") == 8  # header, rule, six rows


def test_synthetic_regimes_flipped_fit_steps(tmp_path):
    runs = synthetic_runs()
    ids = runs.set_index(["model", "setting", "seed"])["run_id"]
    rows = []
    # token benign: the seeds' flipped labels are all fitted from steps 20, 30 and 30
    for seed, first in ((1, 20), (2, 30), (3, 30)):
        for step, frac in ((0, 0.0), (10, 0.25), (20, 1.0 if first == 20 else 0.25), (30, 1.0), (40, 1.0)):
            rows.append(dict(run_id=ids[("token", "benign", seed)], step=step, train_acc_noisy=frac))
    # token not overfitting: never all fitted
    for seed in (1, 2, 3):
        rows += [dict(run_id=ids[("token", "not_overfitting", seed)], step=s, train_acc_noisy=0.25) for s in (0, 40)]
    curves = pd.DataFrame(rows)
    table = synthetic_tables.synthetic_regimes(runs, tmp_path / "regimes", criteria=CRITERIA, curves=curves).set_index(
        ["model", "setting"]
    )
    assert table.loc[("token", "benign"), "flipped_fitted_from_step"] == "20–30 (3 of 3 seeds)"
    assert table.loc[("token", "not_overfitting"), "flipped_fitted_from_step"] == "never by step 40 (0 of 3 seeds)"
    md = (tmp_path / "regimes.md").read_text()
    assert "Flipped labels fitted from step" in md and "20–30 (3 of 3 seeds)" in md
    without = synthetic_tables.synthetic_regimes(runs, tmp_path / "plain", criteria=CRITERIA)
    assert "Flipped labels fitted from step" not in (tmp_path / "plain.md").read_text()
    assert set(without["flipped_fitted_from_step"]) == {""}


def test_synthetic_regimes_seed_fractions_per_horizon(tmp_path):
    runs = synthetic_runs()
    ids = runs.set_index(["model", "setting", "seed"])["run_id"]
    steps = int(runs["steps"].max())
    rows = []
    # token benign: seed 1 fits its flipped labels by step 20, seeds 2 and 3 by step 30; seed 3's
    # attention falls back towards uniform from step 30 on (harmful there)
    for seed, first in ((1, 20), (2, 30), (3, 30)):
        for step in (0, 10, 20, 30, steps):
            rows.append(
                dict(
                    run_id=ids[("token", "benign", seed)],
                    step=step,
                    train_acc_noisy=1.0 if step >= first else 0.25,
                    test_loss_normalised=0.9 if seed == 3 and step >= 30 else 0.2,
                    test_sel_relevant=0.5,
                    test_err_hardmax=0.1,
                )
            )
    table = synthetic_tables.synthetic_regimes(
        runs, tmp_path / "regimes", criteria=CRITERIA, curves=pd.DataFrame(rows), horizons=[10, 25, steps, steps + 1]
    ).set_index(["model", "setting"])
    row = table.loc[("token", "benign")]
    assert row["regimes_at_10"] == "not overfitting 3/3"
    assert row["regimes_at_25"] == "benign 1/3, not overfitting 2/3"  # step 20 is the last logged up to 25
    assert row[f"regimes_at_{steps}"] == "harmful 1/3, benign 2/3"
    assert row[f"regimes_at_{steps + 1}"] == ""  # past the training length
    md = (tmp_path / "regimes.md").read_text()
    assert "Seeds' regimes at step 25" in md and "benign 1/3, not overfitting 2/3" in md
