"""Tables 2 and 6 (benign.tables.real): the real runs of the main grid beside the paper's numbers and
words."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benign.tables import real as real_tables
from tests.helpers import frames

REFERENCE = Path(__file__).resolve().parents[2] / "benign" / "tables" / "reference" / "table6.csv"
SUMMARY = REFERENCE.with_name("table2_summary.csv")


def real_runs():
    rng = np.random.default_rng(0)
    rows = []
    for ds in frames.REAL_DATASETS:
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
