"""Coded partial gradient computation (CPGC / CCPR, Ozfatura, Ulukus, Gunduz, ICASSP 2019).

Codes (:mod:`.codes`), the delay model (:mod:`.delay`), the master's incremental decoder
(:mod:`.master`), vectorised Monte Carlo (:mod:`.simulate`), exact enumeration for small K
(:mod:`.enumerate`), closed forms (:mod:`.closed_forms`), gradient descent with partial recovery
(:mod:`.regression`), decoding cost (:mod:`.decoding_cost`) and the chapter's tables (:mod:`.tables`).
"""
from . import closed_forms, decoding_cost, enumerate, regression, tables  # noqa: F401  (gcc.cpgc.<module>)
from .codes import (ALIASES, SCHEMES, Code, canonical_scheme, example_code_k4, gradient_code,
                    icassp_mds_code, make_code, mds_code, rcsc_code, uncoded_cyclic_code)
from .delay import arrival_times, prob_tasks_done, worker_speeds
from .master import Master, rref_recoverable, required_blocks
from .simulate import SimulationResult, completion, simulate

__all__ = [
    "ALIASES", "SCHEMES", "Code", "canonical_scheme", "example_code_k4", "gradient_code",
    "icassp_mds_code", "make_code", "mds_code", "rcsc_code", "uncoded_cyclic_code",
    "arrival_times", "prob_tasks_done", "worker_speeds",
    "Master", "rref_recoverable", "required_blocks",
    "SimulationResult", "completion", "simulate",
]
