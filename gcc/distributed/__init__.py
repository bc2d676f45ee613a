"""Real distributed execution of the coded-computing schemes on Dask: latencies measured, not sampled.

Dask is optional, so ``import gcc`` does not import this package: ``from gcc.distributed import
open_cluster, coded_compute``.
"""
from gcc.distributed.cluster import open_cluster, worker_addresses
from gcc.distributed.coded import (
    CodedResult, DeadlineError, ModelPlugin, ModelRef, coded_compute,
)
from gcc.distributed.inject import Injection, TaskFault
from gcc.distributed.baselines import Replication, Uncoded
from gcc.distributed.latency import run_requests, simulated_completion, summarize_latency
from gcc.distributed.cpgc import CPGCRun, LateMessages, run_cpgc

__all__ = [
    "open_cluster", "worker_addresses",
    "coded_compute", "CodedResult", "DeadlineError", "ModelRef", "ModelPlugin",
    "Injection", "TaskFault",
    "Uncoded", "Replication",
    "run_requests", "simulated_completion", "summarize_latency",
    "run_cpgc", "CPGCRun", "LateMessages",
]
