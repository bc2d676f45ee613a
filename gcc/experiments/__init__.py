"""The book's experiments: one module per topic, each holding its runner, its summary and its plots.

These modules import the core (:mod:`gcc`) and never the reverse: ``import gcc`` does not load
them. Import the one a chapter needs explicitly, e.g. ``from gcc.experiments import worst_case``.
The list of modules is in CONTRIBUTING.md's module map.
"""
