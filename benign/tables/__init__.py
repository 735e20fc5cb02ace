"""Tables (docs/artifacts.md; the table of them is benign/artifacts/), in reading order:

1. ``common.py``: seed statistics, cell formatting, the atomic CSV + Markdown writer.
2. ``synthetic.py``: the named settings of every model.
3. ``boundaries.py``: the regime boundaries and the regime model of the atlas, worded
   (benign.analysis.boundary_fits computes them);
   ``step_convergence.py``: its step check; ``one_step.py``: the one-step map of the paper's lr;
   ``along_time.py``: the boundaries from the first step; ``n_laws.py``: the exponent of n;
   ``limit.py``: the plateaus against the computed limit; ``w_control.py``: the atlas with W
   frozen; ``predictor_check.py``: the predictor off the grid.
4. ``generalization_times.py`` and ``delay_scan.py``: fit and generalization times;
   ``gap_dynamics.py``: the theory's clock in the benign band.
5. ``max_margin.py``: the attention-SVM check.
6. ``real.py``: Tables 2 and 6, with the paper's numbers (``reference/``) beside ours.
7. ``real_dynamics.py``: real data over phase 2: peak and final test accuracy, the memorising
   epoch, the cost of re-initialisation.
8. ``summary.py``: every table's numbers in one page (``results/summary.md``).

Each is written as ``<stem>.csv`` (numbers) and ``<stem>.md`` (formatted), atomically. Seed
statistics use only runs with status "ok" (the others are counted in ``failed``); the std is
the population std (ddof = 0), as in the paper. A NaN among ok runs is not skipped: it
propagates to the cell, which Markdown shows as "—".

Imports ``analysis``, the halves and ``core``, never ``figures`` (the layer beside it) nor
``plan``; ``artifacts`` and ``cli`` import it.
"""
