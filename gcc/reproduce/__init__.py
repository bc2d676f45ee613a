"""Batch reproduction: run every source notebook with a profile's parameters, then build the book.

``python -m gcc.reproduce [--profile ci|default|paper] [--only NAME ...] [-p NAME VALUE ...] [--list]
[--force] [--keep-going] [--build-book] [--no-run]``: each source notebook ``notebooks/<name>.md``
(jupytext's MyST markdown) runs with papermill, its parameters cell's defaults overridden by its
run card's profile (:mod:`~gcc.reproduce.cards`) and the command line; an unchanged content hash
of source, parameters and library is ``cached`` (:mod:`~gcc.reproduce.execute`); pages, values
and ``run.json`` are written atomically (:mod:`~gcc.reproduce.pages`), the status page and the
site by :mod:`~gcc.reproduce.book`; :mod:`~gcc.reproduce.cli` is the batch and the command line.
"""
from __future__ import annotations

from .book import build_book, format_params, write_parameters_page, write_placeholders, write_status
from .cards import (CARD_ENTRIES, OVERRIDES, PROFILES, Card, check_notebooks_dir, check_output_dir, discover,
                    find_notebooks, load_card, load_yaml, order_notebooks, resolve_parameters)
from .cli import main, parse_value, run_batch
from .execute import KERNEL_NAME, Outcome, cache_key, check_kernel, ensure_kernel, format_error, run_one

__all__ = ["build_book", "format_params", "write_parameters_page", "write_placeholders", "write_status",
           "CARD_ENTRIES", "OVERRIDES", "PROFILES", "Card", "discover", "find_notebooks", "load_card", "load_yaml",
           "order_notebooks", "resolve_parameters", "check_notebooks_dir", "check_output_dir", "main", "parse_value",
           "run_batch", "KERNEL_NAME", "Outcome", "cache_key", "check_kernel", "ensure_kernel", "format_error",
           "run_one"]
