from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benign.analysis.theory import Criteria
from benign.plan.schema import default
from benign.tables import common as common_tables
from benign.tables import real as real_tables
from benign.tables import synthetic as synthetic_tables
from benign.tables.real_dynamics import real_dynamics
from tests.helpers import frames

CRITERIA = Criteria(**default("synthetic.regime"))  # the config's default thresholds (its schema)

REFERENCE = Path(__file__).resolve().parents[2] / "benign" / "tables" / "reference" / "table6.csv"
SUMMARY = REFERENCE.with_name("table2_summary.csv")
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


def real_runs():
    rng = np.random.default_rng(0)
    rows = []
    for ds in (
        dict(dataset="mnist", dataset_label="MNIST", paper_dataset="MNIST"),
        dict(
            dataset="sst2",
            dataset_label="SST-2 (stands in for AG-news)",
            paper_dataset=None,
            backbone="bert-base-uncased",
            num_classes=2,
        ),
    ):
        for n in (20, 200):
            for eta in (0.0, 0.1, 0.2):
                for seed in (42, 314, 2718):
                    rows.append(
                        dict(
                            **ds,
                            n=n,
                            eta=eta,
                            seed=seed,
                            baseline_acc=0.9 + seed / 1e5,
                            train_loss_last_epoch=rng.uniform(0, 0.2),
                            test_acc=rng.uniform(0.7, 0.95),
                        )
                    )
    return frames.real_runs(rows)


def test_real_table_eta0_02(tmp_path):
    runs = real_runs()
    table = real_tables.real_results(runs, REFERENCE, tmp_path / "real_eta0_0.2", etas=[0.0, 0.2])
    assert len(table) == 8 and set(table["eta"]) == {0.0, 0.2}
    assert list(table["dataset"]) == ["mnist"] * 4 + ["sst2"] * 4
    row = table[(table["dataset"] == "mnist") & (table["n"] == 20) & (table["eta"] == 0.0)].iloc[0]
    values = runs[(runs["dataset"] == "mnist") & (runs["n"] == 20) & (runs["eta"] == 0.0)]
    assert row["test_acc_mean"] == pytest.approx(100 * values["test_acc"].mean())
    assert row["test_acc_std"] == pytest.approx(np.std(100 * values["test_acc"].to_numpy(), ddof=0))
    assert row["train_loss_std"] == pytest.approx(np.std(values["train_loss_last_epoch"].to_numpy(), ddof=0))
    assert (row["paper_test_acc_mean"], row["paper_test_acc_std"], row["paper_baseline_acc_mean"]) == (90.8, 1.5, 95.03)
    assert table.loc[table["dataset"] == "sst2", "paper_test_acc_mean"].isna().all()
    md = (tmp_path / "real_eta0_0.2.md").read_text()
    assert "±" in md and "90.8 ± 1.5" in md and f"{row['test_acc_mean']:.1f} ± {row['test_acc_std']:.1f}" in md
    assert "bert-base-uncased: SST-2 (stands in for AG-news)" in md
    assert pd.read_csv(tmp_path / "real_eta0_0.2.csv").shape[0] == 8
    # one reading per data set, the paper's beside ours where the paper has numbers
    readings = md.split("Reading (fits:")[1].strip().splitlines()[1:]
    assert [line.split(":")[0] for line in readings] == ["- MNIST", "- SST-2 (stands in for AG-news)"]
    expected = real_tables.reading(table[table["dataset"] == "mnist"])
    assert (
        readings[0]
        == f"- MNIST: {expected}. Paper: {real_tables.reading(table[table['dataset'] == 'mnist'], 'paper_')}."
    )
    assert "Paper:" not in readings[1]


def test_real_table_eta01_shows_the_papers_words(tmp_path):
    """Table 2 has no published numbers: its paper columns quote the paper's summary, marked as text."""
    notes = {"mnist": "A sentence about its pretraining set"}
    table = real_tables.real_results(real_runs(), REFERENCE, tmp_path / "real_eta0.1", [0.1], SUMMARY, notes)
    assert len(table) == 4 and table["paper_test_acc_mean"].isna().all()
    md = (tmp_path / "real_eta0.1.md").read_text()
    assert "η ∈ {0.1}" in md and "| — |" in md
    assert md.count("| near 0 (text) | 88.5 to 91.4 over n 20 to 1000 (text) |") == 2  # both MNIST rows
    assert "A sentence about its pretraining set." in md and "table2_summary.csv" in md
    assert "MNIST pretrains on 10000 clean rows (the paper's MNIST: 10000); it is the paper's data set" in md
    assert "SST-2 (stands in for AG-news) pretrains on 10000 clean rows." in md
    assert "Epochs of phase 1 (head) and phase 2 (query/key): 300 and 2000" in md
    assert (tmp_path / "real_eta0.1.csv").exists()


def reading_rows(train_loss, test_acc, std=0.5, prefix=""):
    """One data set's table rows over n (20, 200) x eta (0, 0.2): train loss and test accuracy per (n, eta)."""
    rows = [
        {
            "n": n,
            "eta": eta,
            f"{prefix}train_loss_mean": train_loss[(n, eta)],
            f"{prefix}test_acc_mean": test_acc[(n, eta)],
            f"{prefix}test_acc_std": std,
        }  # fmt: skip
        for n in (20, 200)
        for eta in (0.0, 0.2)
    ]
    return pd.DataFrame(rows)


def test_reading_says_fit_and_trend():
    fitted = {(20, 0.0): 0.0, (20, 0.2): 0.01, (200, 0.0): 0.0, (200, 0.2): 0.04}
    harmful = {(20, 0.0): 90.0, (20, 0.2): 88.0, (200, 0.0): 91.0, (200, 0.2): 84.0}
    line = real_tables.reading(reading_rows(fitted, harmful))
    assert line.startswith("fits the noisy labels (train loss <= 0.040")
    assert "as η grows 0 -> 0.2 at n 200, test accuracy falls (harmful): -7.0 points (2 seed stds: 1.0)" in line
    assert "as n grows 20 -> 200 at η 0.2, test accuracy falls (harmful): -4.0 points (2 seed stds: 1.0)" in line
    benign = {(20, 0.0): 90.0, (20, 0.2): 89.5, (200, 0.0): 91.0, (200, 0.2): 90.6}
    assert "test accuracy holds (benign): -0.4 points (2 seed stds: 1.0)" in real_tables.reading(
        reading_rows(fitted, benign)
    )
    # a fall within 2 seed stds holds; without a fit there is no benign or harmful
    unfitted = {**fitted, (200, 0.2): 0.3}
    line = real_tables.reading(reading_rows(unfitted, harmful, std=4.0))
    assert line.startswith("does not fit all noisy labels (train loss 0.300 at n 200, η 0.2)")
    assert (
        "at n 200, test accuracy holds: -7.0 points (2 seed stds: 8.0)" in line
        and "benign" not in line
        and "harmful" not in line
    )
    paper = real_tables.reading(reading_rows(fitted, harmful, prefix="paper_"), "paper_")
    assert paper.startswith("fits the noisy labels")


def test_real_table_refuses_percentages(tmp_path):
    runs = real_runs().assign(test_acc=90.0)
    with pytest.raises(ValueError, match="fractions"):
        real_tables.real_results(runs, REFERENCE, tmp_path / "t", etas=[0.1])


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


def test_delay_scan_says_whether_selection_comes_after_the_fit(tmp_path):
    from benign.tables import delay_scan as delay_tables

    runs, rows = [], []
    # (T, ||mu||): (fit step, censored), (selection step, censored), r at logged steps 0, 10, 100, 1000
    cells = {
        (16, 10.0): ((10.0, False), (100.0, False), (1.0, 0.8, 0.4, 0.2)),  # selection after the fit
        (16, 40.0): ((100.0, False), (10.0, False), (1.0, 0.3, 0.1, 0.05)),  # selection before
        (4, 10.0): ((10.0, False), (1000.0, True), (1.0, 0.9, 0.8, 0.7)),  # never selects: censored
    }
    for (T, norm), ((fit, fit_c), (gen, gen_c), rs) in cells.items():
        for seed in (1, 2):
            rid = f"r-{T}-{norm}-{seed}"
            runs.append(dict(run_id=rid, T=T, signal_norm=norm, seed=seed, d=2000, steps=1000,
                             fit_noisy_step=fit, fit_noisy_censored=fit_c, generalized_step=gen,
                             generalized_censored=gen_c))  # fmt: skip
            rows += [dict(run_id=rid, step=s, test_loss_normalised=r, test_sel_relevant=1 - r)
                     for s, r in zip((0, 10, 100, 1000), rs)]  # fmt: skip
    runs = frames.runs(runs)
    table = delay_tables.delay_scan(runs, pd.DataFrame(rows), tmp_path / "scan").set_index(["T", "signal_norm"])
    assert table.loc[(16, 10.0), "selection_after_fit"] == 2
    assert table.loc[(16, 40.0), "selection_before_fit"] == 2 and table.loc[(16, 40.0), "selection_after_fit"] == 0
    assert table.loc[(4, 10.0), "fit_only"] == 2 and table.loc[(4, 10.0), "selected"] == 0
    assert table.loc[(16, 10.0), "r_at_fit"] == pytest.approx(0.8)  # r at the fit step
    assert table.loc[(4, 10.0), "r_end"] == pytest.approx(0.7)
    md = (tmp_path / "scan.md").read_text()
    assert "In 2 of 6 runs selection arrives after" in md and "not by the horizon (0 of 2)" in md


def test_real_dynamics_table_by_hand(tmp_path):
    """tests/helpers/frames.real_dynamics_case: the means, the censored seed counted, the fall split
    at the memorising epoch, a run that memorises before its peak, a cell with no ok run."""
    runs, curves = frames.real_dynamics_case()
    grid = {"n": [200], "eta": [0.0, 0.05, 0.1, 0.2], "seeds": [1, 2]}
    table = real_dynamics(runs, curves, tmp_path / "real_dynamics", grid=grid).set_index("eta")
    noisy = table.loc[0.2]
    assert noisy["seeds"] == 2 and noisy["peak_test_acc_mean"] == pytest.approx(0.85)
    assert noisy["test_acc_mean"] == pytest.approx(0.65) and noisy["acc_lost_mean"] == pytest.approx(0.2)
    assert (noisy["fitted"], noisy["censored"]) == (1, 1) and noisy["fit_epoch_min"] == 10
    # seed 1: 0.8 at the peak (epoch 3), 0.7 when memorised (epoch 10), 0.6 at the end
    assert noisy["fall_before_fit_mean"] == pytest.approx(0.1) and noisy["fall_after_fit_mean"] == pytest.approx(0.1)
    assert (noisy["peak_epoch_min"], noisy["peak_epoch_max"]) == (1, 3)
    early = table.loc[0.1]  # memorised at epoch 1, peak 0.85 at epoch 3: the whole fall counts as after
    assert (early["seeds"], early["failed"], early["fit_epoch_min"]) == (1, 1, 1)
    assert early["fall_before_fit_mean"] == 0.0 and early["fall_after_fit_mean"] == pytest.approx(0.1)
    assert table.loc[0.05, "seeds"] == 0
    md = (tmp_path / "real_dynamics.md").read_text()
    assert "| 10 (1 of 2 censored) |" in md and "no noisy rows" in md and "85.0 ± 5.0" in md
    assert "| 0.05 | 0 (1 failed) |" in md  # the failed cell is shown, its numbers as missing
    assert pd.read_csv(tmp_path / "real_dynamics.csv").shape[0] == 4
