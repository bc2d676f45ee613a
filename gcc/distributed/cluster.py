"""Cluster lifecycle: a loopback LocalCluster by default (one thread per worker process), or an existing scheduler.

A failed start is retried; a batch waits for a lost worker's replacement at most :data:`REPLACEMENT_WAIT_S`.
"""
from __future__ import annotations

import contextlib
import logging
import socket
import time
from numbers import Integral, Real
from typing import Iterator

from gcc.validation import BOOL, NAME, Interval, NoneOr, invalid, validate_params

__all__ = ["SECONDS", "WORKER_COUNT", "LOADED_MACHINE_CONFIG", "START_ATTEMPTS", "REPLACEMENT_WAIT_S",
           "open_cluster", "worker_addresses", "wait_for_workers", "await_workers"]

#: a timeout or a delay in seconds: a finite real > 0
SECONDS = Interval(Real, 0, None, closed="neither")
#: a number of Dask workers
WORKER_COUNT = Interval(Integral, 1, None)

#: Dask settings for a small machine shared with other work (2 cores): under load a worker's event
#: loop can stall for seconds, so a missed heartbeat or a slow connect must not make the scheduler
#: declare it dead, and the nanny must never kill a worker on memory. :func:`open_cluster` applies them.
LOADED_MACHINE_CONFIG = {
    # connect/handshake and idle-TCP bounds (defaults 30 s): a stalled loop answers late, not never
    "distributed.comm.timeouts.connect": "90s",
    "distributed.comm.timeouts.tcp": "180s",
    "distributed.comm.retry.count": 5,
    # a worker silent for this long is removed (default 5 minutes; heartbeats every ~1 s on 8 workers)
    "distributed.scheduler.worker-ttl": "15 minutes",
    # memory: no pause (a paused worker would hold its pinned task), no terminate, no spill
    "distributed.worker.memory.target": False,
    "distributed.worker.memory.spill": False,
    "distributed.worker.memory.pause": False,
    "distributed.worker.memory.terminate": False,
    # event-loop stalls are expected here: do not log a warning for each
    "distributed.admin.tick.limit": "30s",
}
#: how many times :func:`open_cluster` tries to start a local cluster before giving up
START_ATTEMPTS = 3
#: seconds :func:`await_workers` (hence ``coded_compute`` and ``run_cpgc``) waits for a lost
#: worker's replacement (a nanny restart takes 1-5 s on an idle laptop, several times that loaded)
REPLACEMENT_WAIT_S = 60.0

# One coded call at a time per worker: BLAS/torch threads on top would oversubscribe the cores.
_SINGLE_THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}


@contextlib.contextmanager
@validate_params({"n_workers": WORKER_COUNT, "address": NoneOr(NAME), "timeout": SECONDS, "processes": BOOL})
def open_cluster(n_workers: int = 4, address: str | None = None, *, timeout: float = 60.0,
                 processes: bool = True) -> Iterator["distributed.Client"]:
    """Start a local Dask cluster (or connect to one) and always shut it down.

    The local cluster runs under :data:`LOADED_MACHINE_CONFIG` on 127.0.0.1, 1 GiB per worker, its
    workers under a Nanny (which restarts a dead one). A cluster of several machines: see the book's
    Distributed chapter.

    Parameters
    ----------
    n_workers : int
        Worker processes of the local cluster (one thread each), or workers awaited at ``address``.
    address : str, optional
        An existing scheduler (``"tcp://10.0.0.5:8786"``): only the client is closed on exit.
    timeout : float
        Seconds to wait for the cluster to start and for the workers to connect.
    processes : bool
        Workers as processes (default; needed for parallelism and for killing a worker process).

    Yields
    ------
    distributed.Client
        A client connected to the cluster, with ``n_workers`` workers up.

    Raises
    ------
    RuntimeError
        The local cluster did not start in :data:`START_ATTEMPTS` attempts.
    ValueError
        No scheduler answers at ``address``.
    """
    from distributed import Client

    if address is not None:
        _probe(address, timeout)
        with Client(address, timeout=timeout) as client:
            client.wait_for_workers(n_workers, timeout=timeout)
            yield client
        return

    import dask

    extra = {"env": dict(_SINGLE_THREAD_ENV), "memory_limit": "1GiB"} if processes else {}
    with dask.config.set(LOADED_MACHINE_CONFIG):
        cluster = _start_local(n_workers, processes, timeout, extra)
        try:
            with Client(cluster, timeout=timeout) as client:
                client.wait_for_workers(n_workers, timeout=timeout)
                yield client
        finally:
            cluster.close(timeout=timeout)


def _probe(address: str, timeout: float) -> None:
    """Raise at once if nothing listens at a scheduler ``address`` (Dask would retry until ``timeout``)."""
    from distributed.comm import get_address_host_port

    requirement = "the address of a running Dask scheduler, e.g. 'tcp://10.0.0.5:8786'"
    try:
        host, port = get_address_host_port(address)
        socket.create_connection((host, port), timeout=timeout).close()
    except (OSError, ValueError) as err:
        raise invalid("address", "open_cluster", requirement, address, f"nothing answers there: {err}") from None


def check_client(client, owner: str):
    """Require a ``distributed.Client`` (before any use: a wrong one would fail deep inside Dask)."""
    from distributed import Client

    if not isinstance(client, Client):
        raise invalid("client", owner, "a distributed.Client (open_cluster() yields one)", client)
    return client


def _start_local(n_workers: int, processes: bool, timeout: float, extra: dict):
    """A LocalCluster with ``n_workers`` up, tried :data:`START_ATTEMPTS` times (the last failure raised)."""
    from distributed import LocalCluster

    for attempt in range(1, START_ATTEMPTS + 1):
        cluster = None
        try:
            cluster = LocalCluster(
                n_workers=n_workers, threads_per_worker=1, processes=processes,
                host="127.0.0.1", scheduler_port=0, protocol="tcp://",  # TCP even with processes=False
                dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR, **extra,
            )
            cluster.wait_for_workers(n_workers, timeout=timeout)
            return cluster
        except Exception as err:  # noqa: BLE001 - any start failure is retried, the last one raised
            if cluster is not None:
                with contextlib.suppress(Exception):
                    cluster.close(timeout=timeout)
            if attempt == START_ATTEMPTS:
                raise RuntimeError(f"open_cluster: the local cluster of {n_workers} workers did not start "
                                   f"in {START_ATTEMPTS} attempts of {timeout} s: {err}") from err
            logging.getLogger(__name__).warning("open_cluster: start attempt %d failed (%s); retrying",
                                                attempt, err)
            time.sleep(min(2.0 * attempt, 10.0))


def worker_addresses(client) -> list[str]:
    """Addresses of the connected workers, sorted (the order coded workers are numbered in)."""
    # n_workers=-1: recent distributed versions list only the first few workers otherwise.
    return sorted(check_client(client, "worker_addresses").scheduler_info(n_workers=-1)["workers"])


def wait_for_workers(client, n_workers: int, timeout: float = 60.0, gone: tuple[str, ...] = (),
                     exact: bool = True) -> list[str]:
    """Wait until ``n_workers`` workers (exactly, or at least) are connected and none of ``gone`` is listed.

    A dead worker's Nanny starts a new one under a new address; for a moment the scheduler may list
    both. Returns the sorted addresses; raises TimeoutError after ``timeout`` seconds.
    """
    end = time.monotonic() + timeout
    while True:
        addresses = worker_addresses(client)
        enough = len(addresses) == n_workers if exact else len(addresses) >= n_workers
        if enough and not set(gone) & set(addresses):
            return addresses
        if time.monotonic() >= end:
            raise TimeoutError(f"The cluster did not reach {n_workers} workers without {list(gone)} within "
                               f"{timeout} s; it has {addresses}.")
        time.sleep(0.1)


def await_workers(client, n_workers: int, wait: float = REPLACEMENT_WAIT_S) -> list[str]:
    """The sorted worker addresses after waiting up to ``wait`` seconds for ``n_workers`` (then whatever is up)."""
    try:
        return wait_for_workers(client, n_workers, wait, exact=False)
    except TimeoutError:
        return worker_addresses(client)


def coded_workers(client, n_workers: int, owner: str, wait: float = REPLACEMENT_WAIT_S) -> list[str]:
    """The sorted worker addresses for a code of ``n_workers``: a cluster meant to have as many waits up to
    ``wait`` seconds for lost workers' replacements (then whatever is up); one made smaller is refused."""
    addresses = await_workers(client, n_workers, 0.0)
    if len(addresses) < n_workers <= _planned_workers(client, len(addresses)):
        return await_workers(client, n_workers, wait)
    if len(addresses) < n_workers:
        raise invalid("client", owner, f"a client of a cluster with at least n_workers={n_workers} distinct Dask "
                      "workers", client, f"it has {len(addresses)}; start one with n_workers >= {n_workers}")
    return addresses


def _planned_workers(client, connected: int) -> int:
    """Workers the cluster is meant to have: a local cluster's worker specs (a lost worker's
    nanny keeps its place while it restarts), else the ``connected`` count."""
    cluster = getattr(client, "cluster", None)
    specs = getattr(cluster, "worker_spec", None) or getattr(cluster, "workers", None)
    return max(len(specs), connected) if specs else connected
