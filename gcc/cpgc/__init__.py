"""Coded partial gradient computation (CPGC / CCPR, Ozfatura, Ulukus, Gunduz, ICASSP 2019).

K has two meanings in the companion, and they meet here: in the GCC chapters (:mod:`gcc.codes`) K is
the number of inputs ``n_inputs`` coded for N workers; in CPGC, following Ozfatura et al., K is the
number of workers ``n_workers``, each of the K gradient blocks ``W_k theta`` starting on its own
worker. The CPGC schemes are built by :func:`make_code`, a registry apart from :func:`gcc.codes.make`
(task assignments of gradient blocks, not encoders and decoders of data points).
"""
from . import closed_forms, enumeration, regression  # noqa: F401  (gcc.cpgc.<module>)
from .codes import (ALIASES, LABELS, SCHEMES, CPGCCode, canonical_scheme, example_code_k4, gradient_code,
                    icassp_mds_code, make_code, mds_code, rcsc_code, uncoded_cyclic_code)
from .delay import arrival_times, prob_tasks_done, worker_speeds
from .master import Master, rref_recoverable, required_blocks
from .simulate import SimulationResult, completion, simulate

__all__ = [
    "ALIASES", "LABELS", "SCHEMES", "CPGCCode", "canonical_scheme", "example_code_k4", "gradient_code",
    "icassp_mds_code", "make_code", "mds_code", "rcsc_code", "uncoded_cyclic_code",
    "arrival_times", "prob_tasks_done", "worker_speeds",
    "Master", "rref_recoverable", "required_blocks",
    "SimulationResult", "completion", "simulate",
]
