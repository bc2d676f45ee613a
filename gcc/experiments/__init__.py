"""The book's experiments: one module per topic, each holding its runner, its summary and its plots.

These modules import the core (:mod:`gcc`) and never the reverse: ``import gcc`` does not load
them. Import the one a notebook needs explicitly, e.g. ``from gcc.experiments import worst_case``.
Each notebook ``notebooks/<name>.md`` reads parameters -> calls of its module -> saves (through
:class:`gcc.results.RunContext`) -> shows; what it computes lives here.

Shared by the rate notebooks:

* :mod:`~gcc.experiments.problems` -- test functions, inputs, per-cell seeds, exact noisy loss;
* :mod:`~gcc.experiments.references` -- the theorems' reference curves and their constants;
* :mod:`~gcc.experiments.slopes` -- the saved ``slopes`` tables, joint fits, quoted slopes;
* :mod:`~gcc.experiments.verdicts` -- the two-sided verdict of a measured exponent;
* :mod:`~gcc.experiments.plotting` -- one colour per scheme, interval bands, finishing a figure.

One per notebook (or chapter):

* :mod:`~gcc.experiments.quickstart` -- ``quickstart``: GCC against BACC on ``x sin x``;
* :mod:`~gcc.experiments.worst_case` -- ``worst_case_rate``: the typical case of Theorems 1 and 4;
* :mod:`~gcc.experiments.extremal`, :mod:`~gcc.experiments.extremal_report` -- ``worst_case_extremal``:
  the lower bound of Theorem 1's rate (no decoder beats it) and the decoder test;
* :mod:`~gcc.experiments.adversaries` -- ``worst_case_extremal``: the contiguous block against the
  exact worst straggler set;
* :mod:`~gcc.experiments.probabilistic` -- ``probabilistic_rate``: Bernoulli stragglers (ISIT 2025);
* :mod:`~gcc.experiments.noisy` -- ``noisy_rate``: noisy workers (Theorem 2);
* :mod:`~gcc.experiments.polynomials` -- ``polynomial_lcc``: LCC against GCC on polynomials (App. D);
* :mod:`~gcc.experiments.lambda_sensitivity` -- ``lambda_sensitivity``: App. E on ``x sin x``;
* :mod:`~gcc.experiments.claims` -- ``claims_table``: every stated rate with its verdict;
* :mod:`~gcc.experiments.dnn_models`, :mod:`~gcc.experiments.dnn_stragglers`,
  :mod:`~gcc.experiments.dnn_summary`, :mod:`~gcc.experiments.dnn_lambda`,
  :mod:`~gcc.experiments.dnn_probabilistic`, :mod:`~gcc.experiments.dnn_claims`,
  :mod:`~gcc.experiments.coded_samples`, :mod:`~gcc.experiments.coding_cost` -- the deep-network
  notebooks (:mod:`gcc.dnn._checks`: their argument constraints);
* :mod:`~gcc.experiments.cpgc_tables`, :mod:`~gcc.experiments.cpgc_counting`,
  :mod:`~gcc.experiments.cpgc_published`, :mod:`~gcc.experiments.cpgc_claims` -- the CPGC notebooks
  (completion time, convergence, decoding cost; the exact K = 4, r = 2 Tables I and II; the draft's
  published Tables III and IV and its claims);
* :mod:`~gcc.experiments.dask_latency` -- ``dask_latency``: measured latency on a Dask cluster.

What each module may import is in CONTRIBUTING.md's module map.
"""
