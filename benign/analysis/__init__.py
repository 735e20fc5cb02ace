"""What the runs mean, in reading order (none of it trains; which tokens attention selects,
logged during training, is benign.synthetic.selection):

1. ``metrics.py``: the per-run measures the tables and figures share.
2. ``theory.py``: the paper's regimes and boundaries, and the labels of a run.
3. ``milestones.py``: when a run fits its flipped labels and when it generalizes.
4. ``crossings.py``: one crossing per line, seed and horizon, and the laws fitted to them.
   ``boundaries.py``: the boundaries fitted, and the run-level logistic fit (its steepness, a
   line-seed bootstrap).
5. ``refinement.py``: the runs that refine each line around its transitions.
6. ``survival.py``: fit and generalization times and each run's delay as censored survival times.
   ``gap_growth.py``: does g of the attention gap grow linearly in the benign band?
7. ``predictor.py``: the fitted regime model's answer at a setting.
8. ``time_scale.py``: runs at (lr, t) against (k lr, t / k): is the theory's time lr t?
"""
