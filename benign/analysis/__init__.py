"""What the runs mean, in reading order (none of it trains):

1. ``selection.py``: which tokens attention selects, the attention gap Lambda, and the reference
   losses of the fixed head; ``clock.py``: the theory's clock g.
2. ``metrics.py``: the per-run measures the tables and figures share.
3. ``theory.py``: the paper's regimes and boundaries, and the labels of a run.
4. ``milestones.py``: when a run fits its flipped labels and when it generalizes.
5. ``crossings.py``: one crossing per line, seed and horizon, and the laws fitted to them.
   ``boundaries.py``: the run-level logistic fit (its steepness, a line-seed bootstrap).
6. ``refinement.py``: the runs that refine each line around its transitions.
7. ``survival.py``: fit and generalization times and each run's delay as censored survival times.
   ``gap_growth.py``: does g of the attention gap grow linearly in the benign band?
8. ``predictor.py``: the fitted regime model's answer at a setting.
9. ``max_margin.py``: the attention-SVM direction of a selection.
10. ``time_scale.py``: runs at (lr, t) against (k lr, t / k): is the theory's time lr t?
"""
