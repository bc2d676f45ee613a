"""Batch reproduction: ``python -m gcc.reproduce [--profile ci|default|paper] [--only NAME ...]
[-p NAME VALUE ...] [--list] [--force] [--keep-going] [--build-book] [--no-run]``.

Run cards and parameters (:mod:`~gcc.reproduce.cards`), the batch and the command line
(:mod:`~gcc.reproduce.cli`), the pages (:mod:`~gcc.reproduce.pages`), the site (:mod:`~gcc.reproduce.book`).
"""
from __future__ import annotations

from .book import build_book, write_placeholders
from .cards import OVERRIDES, PROFILES, discover, load_card, load_yaml, order_notebooks, resolve_parameters
from .cli import cache_key, ensure_kernel, main, parse_value, run_batch

__all__ = ["build_book", "write_placeholders", "OVERRIDES", "PROFILES", "discover", "load_card", "load_yaml",
           "order_notebooks", "resolve_parameters", "cache_key", "ensure_kernel", "main", "parse_value", "run_batch"]
