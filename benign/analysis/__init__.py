"""What the runs mean, in reading order (none of it trains; which tokens attention selects,
logged during training, is benign.synthetic.selection):

1. ``metrics.py``: the per-run measures the tables and figures share.
2. ``theory.py``: the paper's regimes and boundaries, the labels of a run, the atlas's view.
3. ``milestones.py``: when a run fits its flipped labels and when it generalizes.
4. ``interval_censored.py``: the normal regression of values known only between two ends,
   clustered by groups; ``crossings.py``: one crossing per line, seed and horizon, and the laws
   fitted to them; ``boundaries.py``: the boundaries' labels and the run-level logistic fit;
   ``equivalence.py``: the words an interval can carry against a theory's value;
   ``boundary_fits.py``: every boundary at every horizon, its settling and its limit, and the
   fitted model the predictor reads.
5. ``refinement.py``: the runs that refine each line around its transitions, and the step
   check's; ``convergence.py``: whether the crossings move with the step or the horizon.
6. ``along_time.py``: each boundary followed from the first step; ``first_step.py``: the first
   step's boundary in closed form; ``n_law.py``: the exponent of n; ``w_control.py``: the atlas
   with W frozen; ``limit.py``: the selection boundaries at step 1, the plateaus and the computed
   limit t = infinity (benign.synthetic.svm_limit), side by side.
7. ``survival.py``: fit and generalization times and each run's delay as censored times;
   ``delay_scan.py``: the benign band's cells, fit and selection in order.
   ``gap_growth.py``: does g of the attention gap grow linearly on the way to the benign regime?
8. ``one_step.py``: where one step at the paper's lr already fits the flipped labels;
   ``max_margin.py``: the attention-SVM check's numbers per horizon and its rates.
9. ``predictor.py``: the fitted regime model's answer at a setting; ``predictor_check.py``: it
   checked off the atlas's grid.

Imports the halves and ``core`` only; ``tables``, ``figures``, ``artifacts`` and ``cli`` import it.
"""
