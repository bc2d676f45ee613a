"""Cluster lifecycle: a loopback LocalCluster by default, or an existing scheduler.

The companion runs on shared laptops and CI machines, so the default cluster is
small, bound to 127.0.0.1 only, has no dashboard (no extra listening port) and
one thread per worker process: a worker *is* one coded worker of the paper, and
a second thread would let two pinned tasks overlap and hide a straggler.

Faults: the cluster is sized for a loaded machine (:data:`LOADED_MACHINE_CONFIG`, the one
place its timeouts, heartbeat bounds and memory policy are set); a failed start is retried
(:data:`START_ATTEMPTS`); a worker that dies is restarted by its Nanny, and a batch started
meanwhile waits for the replacement at most :data:`REPLACEMENT_WAIT_S` seconds
(:func:`await_workers`) -- after that the missing worker is a straggler.
"""
from __future__ import annotations

import contextlib
import logging
import time
from numbers import Integral, Real
from typing import Iterator

from gcc.validation import Interval, validate_params

__all__ = ["SECONDS", "WORKER_COUNT", "LOADED_MACHINE_CONFIG", "START_ATTEMPTS", "REPLACEMENT_WAIT_S",
           "open_cluster", "worker_addresses", "wait_for_workers", "await_workers"]

#: a timeout or a delay in seconds: a finite real > 0
SECONDS = Interval(Real, 0, None, closed="neither")
#: a number of Dask workers
WORKER_COUNT = Interval(Integral, 1, None)

#: Dask settings for a small machine shared with other work (2 cores, a CPU-bound
#: neighbour): the one place the cluster's heartbeats, timeouts and memory policy are
#: set; :func:`open_cluster` applies them to the scheduler, the nannies and the workers.
#: Under load a worker's event loop can stall for seconds (it shares a core with the
#: master, seven other workers and the neighbour), so a missed heartbeat or a slow
#: connect must not make the scheduler declare it dead, and the nanny must never kill
#: a worker on memory (the coded tasks hold a few kB; what is counted is the
#: interpreter and torch, which a loaded machine does not make smaller).
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

    Raises
    ------
    RuntimeError
        The local cluster did not start in :data:`START_ATTEMPTS` attempts.

    Notes
    -----
    The local cluster runs under :data:`LOADED_MACHINE_CONFIG` (timeouts, heartbeats and
    memory policy sized for a loaded 2-core machine); a failed start is retried
    :data:`START_ATTEMPTS` times. The local cluster listens on 127.0.0.1 only, on ports chosen by the OS, with
    its HTTP endpoint on an OS-chosen loopback port. Workers restart automatically if their process dies
    (each runs under a Nanny), under a new address.

    A cluster of several machines is started with Dask's own command-line tools and passed by its
    address (one worker process per coded worker, one thread each)::

        # on the scheduler's machine (10.0.0.5 here)
        dask scheduler --host 10.0.0.5 --port 8786
        # on each worker machine, as many times as it has coded workers
        dask worker tcp://10.0.0.5:8786 --nthreads 1 --nworkers 1

    then ``open_cluster(n_workers=N, address="tcp://10.0.0.5:8786")``. The workers need this
    package importable (and, to serve a network, its weight file at the same path). Only the client
    is closed on exit. ``tests/test_distributed_serving.py`` takes this path on 127.0.0.1.
    """
    if address is not None:
        with _client(address, n_workers, timeout) as client:
            yield client
        return

    import dask

    extra = {"env": dict(_SINGLE_THREAD_ENV), "memory_limit": memory_limit} if processes else {}
    with dask.config.set(LOADED_MACHINE_CONFIG):
        cluster = _start_local(n_workers, processes, silence_logs, timeout, extra)
        try:
            with _client(cluster, n_workers, timeout) as client:
                yield client
        finally:
            cluster.close(timeout=timeout)


def _start_local(n_workers: int, processes: bool, silence_logs: int, timeout: float, extra: dict):
    """A LocalCluster with ``n_workers`` up, tried :data:`START_ATTEMPTS` times (a loaded machine
    sometimes misses a worker's start timeout); the last failure is raised."""
    from distributed import LocalCluster

    for attempt in range(1, START_ATTEMPTS + 1):
        cluster = None
        try:
            cluster = LocalCluster(
                n_workers=n_workers, threads_per_worker=1, processes=processes,
                host="127.0.0.1", scheduler_port=0, protocol="tcp://",  # TCP even with processes=False
                # The scheduler always serves HTTP (health, metrics); an OS-chosen loopback
                # port avoids clashing with other clusters on 8787 and never listens outside.
                dashboard_address="127.0.0.1:0", silence_logs=silence_logs, **extra,
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



def await_workers(client, n_workers: int, wait: float = REPLACEMENT_WAIT_S) -> list[str]:
    """The sorted worker addresses, after waiting up to ``wait`` seconds for ``n_workers`` of them.

    A worker whose process died is replaced by its Nanny under a new address a few
    seconds later; a batch started meanwhile waits for it instead of failing. After
    ``wait`` seconds it gets whatever is connected (maybe fewer than ``n_workers``:
    the caller treats the missing ones as stragglers).

    Parameters
    ----------
    client : distributed.Client
    n_workers : int
        Workers wanted.
    wait : float
        Bound in seconds on the wait (0: no wait).

    Returns
    -------
    list of str
        Sorted addresses, at least ``n_workers`` unless the wait ran out.
    """
    end = time.monotonic() + wait
    while True:
        addresses = worker_addresses(client)
        if len(addresses) >= n_workers or time.monotonic() >= end:
            return addresses
        time.sleep(0.2)
