"""The book's experiments: one module per topic (or notebook), each holding its runner, summary and plots.

These modules import the core (:mod:`gcc`) and never the reverse: ``import gcc`` does not load them;
import the one a notebook needs, e.g. ``from gcc.experiments import worst_case``. A notebook
``notebooks/<name>.md`` reads its parameters, calls its module, saves through
:class:`gcc.results.RunContext` and shows. Shared by the rate notebooks: :mod:`~gcc.experiments.problems`
(test problems), :mod:`~gcc.experiments.references` (reference curves), :mod:`~gcc.experiments.slopes`
(the ``slopes`` tables), :mod:`~gcc.experiments.verdicts` and :mod:`~gcc.experiments.plotting`. What
each module may import is in CONTRIBUTING.md's module map.
"""
