"""Cluster lifecycle: a loopback LocalCluster by default, or an existing scheduler.

The companion runs on shared laptops and CI machines, so the default cluster is
small, bound to 127.0.0.1 only, has no dashboard (no extra listening port) and
one thread per worker process: a worker *is* one coded worker of the paper, and
a second thread would let two pinned tasks overlap and hide a straggler.
"""
from __future__ import annotations

import contextlib
import logging
from numbers import Integral, Real
from typing import Iterator

from gcc.validation import Interval, validate_params

__all__ = ["SECONDS", "WORKER_COUNT", "open_cluster", "worker_addresses", "wait_for_workers"]

#: a timeout or a delay in seconds: a finite real > 0
SECONDS = Interval(Real, 0, None, closed="neither")
#: a number of Dask workers
WORKER_COUNT = Interval(Integral, 1, None)

# Each worker process computes one coded task at a time; BLAS/torch threads on
# top of that would oversubscribe the cores and distort measured latencies.
_SINGLE_THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}


@contextlib.contextmanager
@validate_params({"n_workers": WORKER_COUNT, "timeout": SECONDS}, owner="open_cluster")
def open_cluster(n_workers: int = 4, address: str | None = None, *, timeout: float = 60.0,
                 memory_limit: str | int = "1GiB", processes: bool = True,
                 silence_logs: int = logging.ERROR) -> Iterator["distributed.Client"]:
    """Start a local Dask cluster (or connect to one) and always shut it down.

    Parameters
    ----------
    n_workers : int
        Number of worker processes of the local cluster (one thread each). With
        ``address`` given, the context waits until that many workers are connected.
    address : str, optional
        Address of an existing scheduler, e.g. ``"tcp://10.0.0.5:8786"``. Then no
        local cluster is started and only the client is closed on exit (the
        remote cluster belongs to whoever started it).
    timeout : float
        Seconds to wait for the cluster to start and for the workers to connect.
    memory_limit : str or int
        Memory limit per worker of the local cluster.
    processes : bool
        Workers as separate processes (default; needed for real parallelism and
        for fault injection that kills a worker process).
    silence_logs : int
        Logging level of the cluster's own loggers.

    Yields
    ------
    distributed.Client
        A client connected to the cluster, with ``n_workers`` workers up.

    Notes
    -----
    The local cluster listens on 127.0.0.1 only, on ports chosen by the OS, with
    its HTTP endpoint on an OS-chosen loopback port. Workers restart automatically if their process dies
    (each runs under a Nanny), under a new address.
    """
    from distributed import LocalCluster

    if address is not None:
        with _client(address, n_workers, timeout) as client:
            yield client
        return

    extra = {"env": dict(_SINGLE_THREAD_ENV), "memory_limit": memory_limit} if processes else {}
    cluster = LocalCluster(
        n_workers=n_workers, threads_per_worker=1, processes=processes,
        host="127.0.0.1", scheduler_port=0, protocol="tcp://",  # TCP even with processes=False (not inproc)
        # The scheduler always serves HTTP (health, metrics); an OS-chosen loopback
        # port avoids clashing with other clusters on 8787 and never listens outside.
        dashboard_address="127.0.0.1:0",
        silence_logs=silence_logs, **extra,
    )
    try:
        with _client(cluster, n_workers, timeout) as client:
            yield client
    finally:
        cluster.close(timeout=timeout)


@contextlib.contextmanager
def _client(target, n_workers: int, timeout: float) -> Iterator["distributed.Client"]:
    """A client of ``target`` (a scheduler address or a cluster) once ``n_workers`` are up; closed on exit."""
    from distributed import Client

    client = Client(target, timeout=timeout)
    try:
        client.wait_for_workers(n_workers, timeout=timeout)
        yield client
    finally:
        client.close(timeout=timeout)


def worker_addresses(client) -> list[str]:
    """Addresses of the connected workers, sorted (the order coded tasks are pinned in).

    Parameters
    ----------
    client : distributed.Client

    Returns
    -------
    list of str
    """
    # n_workers=-1: recent distributed versions list only the first few workers otherwise.
    info = client.scheduler_info(n_workers=-1)
    return sorted(info["workers"])


def wait_for_workers(client, n_workers: int, timeout: float = 60.0, gone: tuple[str, ...] = ()) -> list[str]:
    """Wait until exactly ``n_workers`` workers are connected and none of ``gone`` is listed.

    After a worker process dies its Nanny starts a new one under a new address;
    for a moment the scheduler may list the new worker while the dead one is
    still registered. Pinning tasks to that stale address would wait forever.

    Parameters
    ----------
    client : distributed.Client
    n_workers : int
    timeout : float
        Seconds before giving up.
    gone : tuple of str
        Addresses that must have left.

    Returns
    -------
    list of str
        The sorted addresses.

    Raises
    ------
    TimeoutError
        The cluster did not reach that state within ``timeout`` seconds.
    """
    import time

    end = time.monotonic() + timeout
    while True:
        addresses = worker_addresses(client)
        if len(addresses) == n_workers and not set(gone) & set(addresses):
            return addresses
        if time.monotonic() > end:
            raise TimeoutError(
                f"The cluster did not reach {n_workers} workers without {list(gone)} within {timeout} s; "
                f"it has {addresses}."
            )
        time.sleep(0.1)

