"""Which tokens attention selects (docs/regimes.md#selection): the quantities the regime labels
read, computed from the softmax over a sample's tokens at a logged step.

Token kinds (docs/data.md): token 0 is the relevant token mu_{Y*} + eps; token 1 the weakly
relevant token of the true label, rho mu_{Y*} + eps (the paper's W_{Y*}); token 2 the weakly
relevant token of the other label, rho mu_{-Y*} + eps (W_{-Y*}); tokens 3..T-1 are irrelevant
(noise alone). A model whose attention rows hold extra entries before the T input tokens (the
encoder's [CLS]) has them skipped: the last T entries of a row are the input tokens.

For the fixed-head models, f = sum_t a_t v_t with v_t = <x_t, nu>, so two attentions bound what
token selection can do to the test loss on the run's own test set:
- L_sel, one-hot attention on the relevant token: f = v_0;
- L_unif, uniform attention: f = mean_t v_t (what the model computes at step 0).
The normalised test loss r = (L - L_sel) / (L_unif - L_sel) is 1 under uniform attention and 0
under perfect selection, whatever ||mu||, d and n: it reads the attention, not the head.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from benign.synthetic.clock import g

KINDS = ("relevant", "weak_true", "weak_opposite", "irrelevant")  # token 0, 1, 2, 3..T-1


def token_kinds(T: int) -> torch.Tensor:
    """The kind (an index into KINDS) of each of T input tokens."""
    return torch.tensor([0, 1, 2] + [3] * (T - 3))[:T]


def input_tokens(att: torch.Tensor, T: int) -> torch.Tensor:
    """The attention on the T input tokens of each row (B, m, T): the row's last T entries."""
    return att[..., att.shape[-1] - T :]


def most_attended_kind(att: torch.Tensor, T: int) -> torch.Tensor:
    """(B, m) index into KINDS of each row's most-attended entry; len(KINDS) where no one input
    token is (a tie for the most, as uniform attention at step 0, or the encoder's [CLS])."""
    extra = att.shape[-1] - T
    top_value, top = att.max(-1)
    tied = (att == top_value.unsqueeze(-1)).sum(-1) > 1
    top = top - extra
    kinds = token_kinds(T).to(att.device)
    return torch.where((top >= 0) & ~tied, kinds[top.clamp_min(0)], torch.full_like(top, len(KINDS)))


def _mean_over(values: torch.Tensor, mask: torch.Tensor | None) -> np.ndarray:
    """Mean of (B, m) values over the samples in ``mask`` (B, m), NaN where the mask is empty."""
    values = values.double()
    if mask is None:
        return values.mean(-1).cpu().numpy()
    mask = mask.to(values.device).double()
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((values * mask).sum(-1) / mask.sum(-1)).cpu().numpy()


def selection(att: torch.Tensor, T: int, mask: torch.Tensor | None = None) -> dict[str, np.ndarray]:
    """Per run (B,): the fraction of samples (those in ``mask``, all by default) whose
    most-attended token is each kind (``sel_<kind>``), and the mean attention on the relevant
    token (``att_relevant``)."""
    kind = most_attended_kind(att, T)
    out = {f"sel_{name}": _mean_over(kind == k, mask) for k, name in enumerate(KINDS)}
    out["att_relevant"] = _mean_over(input_tokens(att, T)[..., 0], mask)
    return out


def hardmax_error(att: torch.Tensor, values: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """The test error of the hard-max readout, per run (B,): each sample attends only to its
    most-attended input token (uniformly to the tokens tied for the most, as under the uniform
    attention of step 0), f = v of that token, and an error is y f <= 0. Training drives the
    softmax towards its argmax, so this is the error the run heads for once its attention
    saturates: the theorem's long-time test error (docs/regimes.md#labels). ``values`` (B, m,
    T) are v_t = <x_t, nu>, ``y`` (B, m) or (m,) the labels."""
    att = input_tokens(att, values.shape[-1])
    top = (att == att.max(-1, keepdim=True).values).to(values.dtype)
    f = (top * values).sum(-1) / top.sum(-1)
    return _mean_over((y.expand(f.shape) * f <= 0).double(), None)


def attention_gap(att: torch.Tensor, T: int) -> torch.Tensor:
    """Lambda of each row (B, m): the relevant token's logit minus the log-sum-exp of every other
    entry's, log a_0 - log(1 - a_0) from the softmax a (docs/regimes.md#dynamics). a_0 is held
    one machine epsilon inside (0, 1), so a saturated row gives a finite Lambda (about 36 in
    float64)."""
    a0 = input_tokens(att, T)[..., 0].double()
    eps = torch.finfo(att.dtype).eps
    a0 = a0.clamp(eps, 1 - eps)
    return torch.log(a0) - torch.log1p(-a0)


def gap_growth(att: torch.Tensor, T: int, mask: torch.Tensor | None = None) -> dict[str, np.ndarray]:
    """Per run (B,), over the samples in ``mask``: the mean Lambda (``lambda``) and the mean
    g(Lambda + log T) (``g``), the theory's clock: g of the gap grows linearly in the steps when
    the drive on the relevant token is constant (:func:`g`; Lambda + log T is the
    gap x of s = e^x / (e^x + T))."""
    lam = attention_gap(att, T)
    growth = torch.as_tensor(g(lam.cpu().numpy() + np.log(T), T), device=lam.device)
    return {"lambda": _mean_over(lam, mask), "g": _mean_over(growth, mask)}


def reference_losses(values: torch.Tensor, y: torch.Tensor, mask: torch.Tensor | None = None) -> dict[str, np.ndarray]:
    """The fixed head's losses under the two reference attentions, per run (B,): ``values`` (B,
    m, T) are v_t = <x_t, nu> of each sample's tokens, ``y`` (B, m) or (m,) its labels.
    ``loss_selected`` (one-hot on token 0), ``loss_uniform`` and ``acc_uniform`` (uniform)."""
    y = y.expand(values.shape[:-1])
    uniform = values.mean(-1)
    return {
        "loss_selected": _mean_over(F.softplus(-y * values[..., 0]), mask),
        "loss_uniform": _mean_over(F.softplus(-y * uniform), mask),
        "acc_uniform": _mean_over((y * uniform > 0).double(), mask),
    }


def normalised_loss(loss, loss_selected, loss_uniform):
    """r = (L - L_sel) / (L_unif - L_sel): 1 under uniform attention, 0 under selection of the
    relevant token; NaN where the two references do not differ."""
    loss, sel, unif = (np.asarray(v, dtype=float) for v in (loss, loss_selected, loss_uniform))
    span = unif - sel
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(span > 0, (loss - sel) / np.where(span > 0, span, 1.0), np.nan)
