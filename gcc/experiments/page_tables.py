"""The columns a page shows of its wider tables, headed in words (every column stays in the CSV):
``display_table(frame, **spec("notebook.table"))`` on a page, ``run.include(in_words(frame, key), ...)``
for a chapter.
"""
from __future__ import annotations

from ..validation import Options, validate

__all__ = ["PAGE_TABLES", "spec", "in_words"]

_CI = {"ci_low": "95% low", "ci_high": "95% high"}

#: ``"notebook.table"`` -> ``{column: header}`` in the order shown (a header equal to the key is a word already)
PAGE_TABLES: dict[str, dict[str, str]] = {
    "dask_latency.summary": {"scheme": "scheme", "latency_p50_ms": "p50 (ms)", "latency_p99_ms": "p99 (ms)",
                             "simulated_p99_ms": "simulated p99 (ms)", "latency_p99_vs_baseline": "p99 / uncoded's",
                             "loss_mean": "mean loss"},
    "dask_latency.cpgc_summary": {"scheme": "scheme", "tolerance": "q", "n_iterations": "iterations",
                                  "time_mean_ms": "mean time (ms)", "simulated_mean_ms": "simulated (ms)",
                                  "messages_mean": "messages", "final_test_error": "test error"},
    "dnn_stragglers.comparison": {"model": "model", "regime": "regime", "stragglers": "S", "scheme_mean": "GCC mean",
                                  "baseline_mean": "BACC mean", "improvement_pct": "GCC over BACC (%)",
                                  "better": "GCC better", "significant": "significant (95%)"},
    "dnn_stragglers.lambdas": {"model": "model", "regime": "regime", "stragglers": "S", "lam_enc": "λ enc",
                               "lam_dec": "λ dec"},
    "dnn_lambda.x10": {"model": "model", "stragglers": "S", "parameter": "parameter", "factor": "factor",
                       "change_pct": "RMSE change (%)", **_CI, "verdict": "verdict"},
    "dnn_lambda.movement": {"model": "model", "regime": "regime", "parameter": "parameter", "lam_min": "smallest λ",
                            "lam_max": "largest λ", "span_steps": "span (decades)", "verdict": "verdict"},
    "dnn_lambda.near_optimum": {"model": "model", "regime": "regime", "stragglers": "S", "comparison": "comparison",
                                "diff_mean": "mean difference", **_CI, "verdict": "verdict"},
}


def spec(key: str) -> dict:
    """The keyword arguments of :func:`gcc.display.display_table` for the table ``key`` (``"notebook.table"``):
    ``name`` (the CSV's file name), ``columns`` and ``headers``."""
    validate(key, Options(tuple(PAGE_TABLES)), "key", "spec")
    words = PAGE_TABLES[key]
    return {"name": key.split(".", 1)[1], "columns": list(words),
            "headers": {k: v for k, v in words.items() if k != v}}


def in_words(frame, key: str):
    """`frame` reduced to the columns of `key` and headed in words (a chapter's include)."""
    return frame[spec(key)["columns"]].rename(columns=PAGE_TABLES[key])
