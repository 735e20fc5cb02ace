"""What the runs mean, in reading order (none of it trains):

1. ``selection.py``: which tokens attention selects, and the reference losses of the fixed head.
2. ``metrics.py``: the per-run measures the tables and figures share.
3. ``theory.py``: the paper's regimes and boundaries, and the labels of a run.
4. ``milestones.py``: when a run fits its flipped labels and when it generalizes.
5. ``boundaries.py``: one maximum-likelihood fit per boundary and horizon, with profile intervals.
6. ``refinement.py``: the runs that refine each line around its transitions.
7. ``survival.py``: fit and generalization times as censored survival times.
8. ``predictor.py``: the fitted regime model's answer at a setting.
9. ``max_margin.py``: the attention-SVM direction of a selection.
10. ``time_scale.py``: runs at (lr, t) against (k lr, t / k): is the theory's time lr t?
"""
