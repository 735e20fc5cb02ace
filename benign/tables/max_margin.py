"""The attention-SVM table (docs/max_margin.md): at each horizon, how close the trained direction
is to the max-margin direction of the tokens it selects, which tokens the clean and the noisy
samples select, and the margins, as benign.analysis.max_margin summarises them, worded."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.max_margin import horizon_rows, rate_fits
from benign.synthetic import spec
from benign.tables.common import PathLike, num, write

SOURCE = (
    "Tarzanagh, Li, Zhang and Oymak (NeurIPS 2023), the local convergence of gradient descent on p "
    "with W fixed: p(t) / ||p(t)|| -> p^mm / ||p^mm||, the attention-SVM direction of the locally optimal "
    "tokens it selects"
)
APPROACH = 0.99  # a final cosine at least this "approaches 1"
ROLE = {"token_p_w0": "theorem check (W = W0 fixed, p trained)", "token_p_identity": "theorem check (W = I fixed)",
        "token": "exploration (W and p trained: W p against the SVM over raw tokens)"}  # fmt: skip


def max_margin(frame: pd.DataFrame, stem: PathLike, horizons) -> pd.DataFrame:
    """<stem>.csv (every number) and <stem>.md: one row per (model, setting, horizon)."""
    if frame.empty:
        raise ValueError("the attention-SVM check has no runs")
    table = horizon_rows(frame, horizons)
    display = pd.DataFrame(
        {
            "Model": table["model"],
            "Setting": table["setting"],
            "d": table["d"],
            spec.SYMBOLS["signal_norm"]: table["signal_norm"].map("{:g}".format),
            "Step": table["step"],
            "cos(p, p^mm) mean [min, max]": [
                f"{num(r.cosine, 4)} [{num(r.cosine_min, 4)}, {num(r.cosine_max, 4)}]" for r in table.itertuples()
            ],
            "Baselines: cos with random / early selection's SVM / relevant mean": [
                f"{num(r.cosine_random, 3)} / {num(r.cosine_early, 3)} / {num(r.cosine_relevant, 3)}"
                for r in table.itertuples()
            ],
            "Locally optimal selection": table["locally_optimal"].map(_pct),
            "Margin / max margin": table["margin_ratio"].map(lambda v: num(v, 3)),
            "Selection unchanged since step": table["selection_stable_since"],
            "Clean: relevant token": table["clean_signal"].map(_pct),
            "Noisy: relevant / opposite-class / noise token": [
                f"{_pct(r.noisy_signal)} / {_pct(r.noisy_opposite)} / {_pct(r.noisy_noise)}" for r in table.itertuples()
            ],
            "Noisy: token agrees with flipped label": table["noisy_agrees"].map(_pct),
            "Train loss": table["train_loss"].map(lambda v: num(v, 3)),
            "Test error: hard-max readout / SVM direction (largest gap over seeds)": [
                f"{_pct(r.test_err_hardmax, 1)} / {_pct(r.test_err_svm, 1)} ({_pct(r.limit_gap_max, 1)})"
                for r in table.itertuples()
            ],
            "Test samples whose token the two pick alike": table["test_svm_agreement"].map(_pct),
        }
    )
    header = [
        "## The attention-SVM check: max-margin token selection",
        f"Source: {SOURCE}. With d much larger than n T every selection is separable, so the prediction is "
        "local: the direction p(t) aligns with p^mm(a(t)), a(t) the token each sample attends to most at step "
        "t. The W-fixed model is the theorem's setting; the paper's model (W trained) is exploration, "
        "its effective query W p compared with the SVM over the raw tokens. This prediction is not the "
        "reproduced paper's.",
        "Per setting, mean over seeds at the last logged step at or before each horizon. Margin / max margin: "
        "the smallest margin of the trained direction, over its norm, divided by the SVM's 1 / ||p^mm|| (1 at "
        "the max-margin direction). Relevant token: mu_y (token 0); opposite-class: rho mu_{-y} (token 2). "
        "Baselines of the cosine: the same direction against the SVM direction of a random selection (one per "
        "run, seeded), of the selection gradient descent makes at step 1, and against the relevant tokens' mean "
        "key. Locally optimal selection: the share of samples whose selected token's head score y <x, v> exceeds "
        "that of every support token of the SVM (Tarzanagh et al.'s condition for the local convergence).",
        "The long-time label: where p(t) / ||p(t)|| converges to p^mm of the selection it has reached, the test "
        "error of each test sample read through its most-attended token under p^mm is the run's t -> infinity "
        "error (the hard-max readout of p^mm). Beside it, the hard-max readout of the trained state at the same "
        "step: equal where the trained direction already picks the test tokens the limit does; a gap means the "
        "readout at this horizon is not yet the limit's (or the selection will still change).",
    ]
    rates = rate_fits(frame)
    footer = [_reading(table), _rates_text(rates)]
    write(table, display, header, stem, footer)
    return table


def _reading(table: pd.DataFrame) -> str:
    """Per model: the final cosines, how many reach ``APPROACH``, whether they rise with the
    horizon, and how fast 1 - cos shrinks over the last two horizons against the 1 / log^2 t
    rate of their single-input example."""
    lines = []
    for model, rows in table.groupby("model", sort=False):
        horizons = sorted(rows["horizon"].unique())
        final = rows[rows["horizon"] == horizons[-1]].set_index("setting")
        first = rows[rows["horizon"] == horizons[0]].set_index("setting").reindex(final.index)
        near = int((final["cosine"] >= APPROACH).sum())
        line = (
            f"{model}, {ROLE.get(model, model)}: at step {int(final['step'].max())} the mean cosine is "
            f"{final['cosine'].min():.4f} to {final['cosine'].max():.4f} over {len(final)} settings, {near} of "
            f"{len(final)} at least {APPROACH}; {int((final['cosine'] > first['cosine']).sum())} of {len(final)} "
            f"higher than at step {int(first['step'].max())}"
        )
        if len(horizons) > 1:
            before = rows[rows["horizon"] == horizons[-2]].set_index("setting").reindex(final.index)
            shrink = ((1 - final["cosine"]) / (1 - before["cosine"])).mean()
            steps = int(before["step"].max()), int(final["step"].max())
            line += (
                f"; 1 - cos shrinks by {shrink:.2f} from step {steps[0]} to {steps[1]} (a 1 / log^2 t rate: "
                f"{(np.log(steps[0]) / np.log(steps[1])) ** 2:.2f})"
            )
        same = int((final["limit_gap_max"] == 0).sum())
        line += (
            ""
            if final["limit_gap_max"].isna().all()
            else (
                f"; the hard-max readout's test error equals the SVM direction's on every seed in {same} of {len(final)} "
                f"settings (largest gap {100 * final['limit_gap_max'].max():.1f} points)"
            )
        )
        lines.append(line + ".")
    return "Reading: " + " ".join(lines)


def _rates_text(rates: pd.DataFrame) -> str:
    if rates.empty:
        return "Rates: too few logged steps past step 100 to fit."
    parts = [
        f"{r.model} {r.setting}: (log t)^-{r.log_exponent:.2f} ± {r.log_se:.2f} (RMS {r.log_rms:.3f}) against "
        f"t^-{r.power_exponent:.3f} ± {r.power_se:.3f} (RMS {r.power_rms:.3f}), over {r.decades:.1f} decades"
        for r in rates.itertuples()
    ]
    return (
        "Rates of 1 - cos (seed mean, least squares in log(1 - cos) from step 100): " + "; ".join(parts) + ". "
        "The smaller RMS fits better; the 1 / log^2 t rate of the single-input example is an exponent of 2 on log t."
    )


def _pct(value: float, digits: int = 0) -> str:
    return f"{100 * value:.{digits}f}%" if np.isfinite(value) else "—"
