"""Real distributed execution of the coded-computing schemes on Dask.

Everything else in :mod:`gcc` simulates the workers; this subpackage runs the
same codes on a Dask cluster so that latencies are measured, not sampled.

* :mod:`gcc.distributed.cluster` -- start (or connect to) a cluster, always shut it down.
* :mod:`gcc.distributed.coded` -- one coded batch: encode at the master, one task
  per coded input pinned to a distinct worker, decode as soon as the decoding
  condition holds, cancel the stragglers.
* :mod:`gcc.distributed.inject` -- straggler and fault injection inside the workers.
* :mod:`gcc.distributed.baselines` -- uncoded and replication schemes with the codes' interface.
* :mod:`gcc.distributed.cpgc` -- coded partial gradient computation with one message per partial product.
* :mod:`gcc.distributed.latency` -- repeated requests, tidy latency tables, simulated completion times.
* :mod:`gcc.distributed.serving` -- coded serving of a trained network: each worker loads it once
  (from the weight cache, on its device), requests of K labelled images, accuracy and RelAcc.

The chapter's experiments (the schemes compared, the runs, their summaries and figures) are in
:mod:`gcc.experiments.dask_latency`, which imports this package; this package never imports it.

Dask is an optional dependency (``pip install gcc-companion[dist]``), so this
package is not imported by ``import gcc``; import it explicitly::

    from gcc.distributed import open_cluster, coded_compute
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
