"""Batch reproduction: run every source notebook with a profile's parameters.

Usage::

    python -m gcc.reproduce [--profile ci|default|paper] [--only NAME ...] [--force]
                            [--list] [--jobs 1] [--keep-going] [--notebooks-dir DIR]
                            [--build-book] [--no-run]

Each source notebook ``notebooks/<name>.md`` (MyST markdown read by jupytext; JSON
``<name>.ipynb`` sources still run during the transition) has a run card
``notebooks/<name>.yaml`` (title, order, depends, per-profile parameters; see CONTRIBUTING.md).
The runner

1. discovers the notebooks and orders them by ``depends``, then ``order``, then name
   (:mod:`~gcc.reproduce.cards`);
2. for each, merges the profile's parameters over the notebook's own defaults (and
   passes ``profile=<name>`` when the notebook's parameters cell declares ``profile``);
3. computes a cache key (:mod:`~gcc.reproduce.cache`): sha256 over the notebook source with
   outputs stripped, the parameters, :func:`gcc.results.library_fingerprint` (jupyter-cache
   ignores the library's code, so it cannot be used here), the profile and the keys of the
   notebooks it depends on; an unchanged key with a successful previous run is reported as
   ``cached`` and not rerun;
4. otherwise converts it (jupytext) and executes it with papermill into
   ``book/generated/<name>.ipynb`` (cwd = the repository root, ``GCC_RESULTS_ROOT`` set to the
   batch's results root), tags its cells for the page (code behind a toggle, papermill's
   injected cell removed; :mod:`~gcc.reproduce.pages`) and completes ``<results>/<name>/run.json``,
   the one provenance record of the run: what the notebook's :class:`gcc.results.RunContext`
   wrote (all parameters, tables, figures, values) plus profile, injected parameters, seconds,
   status and cache key (:mod:`~gcc.reproduce.execute`, :mod:`~gcc.reproduce.batch`);
5. writes the values the run recorded as ``book/generated/values/<name>.{json,md}`` (the MyST
   substitutions and includes of the chapters) and ``book/generated/status.md``, the status
   table the book shows (:mod:`~gcc.reproduce.status`).

A notebook error makes the command exit with status 1 and print the notebook, the
failing cell (index and first lines of source) and the error. With ``--keep-going``
the remaining independent notebooks still run; without it the batch stops.

``--build-book`` then builds the static site with Jupyter Book (``-W -n --keep-going``,
notebooks are never executed by Jupyter Book; :mod:`~gcc.reproduce.book`). Table-of-contents
entries whose page does not exist yet are left out of that build (and listed); executed
notebooks missing from ``_toc.yml`` are added under "Other notebooks" so that no result is lost.

Modules: ``locations`` (folders), ``cards`` (run cards, profiles, order), ``cache`` (cache
keys, run records), ``pages`` (page tags, value files, substitutions), ``execute`` (kernel,
papermill, one notebook's outcome), ``batch`` (the batch), ``status`` (status and parameters
pages), ``book`` (the Jupyter Book build), ``cli`` (the command line). Heavy packages
(papermill, nbformat, yaml, jupyter) are imported inside the functions that need them.

Before a notebook runs, the batch checks everything it can: the folders exist (the notebooks
folder holds at least one notebook), the options are in range, the kernel is installed, every
run card of the plan is valid YAML with known entries and sets only parameters that its
notebook declares, and every notebook can be read; each problem is a ``ValueError`` in the
contract's form naming the option, the file and the entry (exit status 2). Results, pages and
records are written atomically (:mod:`gcc.atomic`), ``run.json`` last, so a batch killed at any
moment is redone by the next one exactly where it stopped.
"""
from __future__ import annotations

from . import batch, book, cache, cards, cli, execute, locations, pages, status
from .batch import run_batch
from .book import build_book, effective_toc, toc_entries
from .cache import RUN_RECORD, cache_key, missing_outputs, read_record
from .cards import (CARD_ENTRIES, PROFILES, NotebookCard, check_notebooks_dir, check_parameters, discover,
                    find_notebooks, load_card, load_yaml, notebook_parameters, order_notebooks, resolve_parameters)
from .cli import main
from .execute import KERNEL_NAME, Outcome, check_kernel, ensure_kernel, format_error, run_one
from .pages import (VALUES_DIR, VISIBILITY_TAGS, finish_page, placeholder_includes, referenced_includes,
                    referenced_values, substitutions, values_written, write_values)
from .locations import (check_output_dir, default_notebooks_dir, default_output_dir, default_results_root, relative,
                        repo_root)
from .status import format_params, write_parameters_page, write_status

#: Everything the modules export (each module's ``__all__``), in the order of the runner's steps.
__all__ = [*locations.__all__, *cards.__all__, *cache.__all__, *pages.__all__, *execute.__all__, *batch.__all__,
           *status.__all__, *book.__all__, *cli.__all__]
