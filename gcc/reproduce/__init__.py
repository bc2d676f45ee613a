"""Batch reproduction: ``python -m gcc.reproduce [--profile ci|default|paper] [--only NAME ...]
[-p NAME VALUE ...] [--list] [--force] [--keep-going] [--build-book] [--no-run]``.

Run cards and parameters (:mod:`~gcc.reproduce.cards`), the batch and the command line
(:mod:`~gcc.reproduce.cli`), the pages (:mod:`~gcc.reproduce.pages`), the site (:mod:`~gcc.reproduce.book`).
"""
from __future__ import annotations

from .book import build_book, write_parameters_page, write_placeholders, write_status
from .cards import OVERRIDES, PROFILES, Card, discover, load_card, load_yaml, order_notebooks, resolve_parameters
from .cli import KERNEL_NAME, Outcome, cache_key, ensure_kernel, main, parse_value, run_batch, run_one

__all__ = ["build_book", "write_parameters_page", "write_placeholders", "write_status", "OVERRIDES", "PROFILES",
           "Card", "discover", "load_card", "load_yaml", "order_notebooks", "resolve_parameters", "KERNEL_NAME",
           "Outcome", "cache_key", "ensure_kernel", "main", "parse_value", "run_batch", "run_one"]
