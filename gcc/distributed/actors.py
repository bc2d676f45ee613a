"""The actor engine of :func:`gcc.distributed.coded_compute`: one kept :class:`CodedWorker` per worker.

Imports only :mod:`gcc.distributed.inject` (for the type of a fault); :mod:`gcc.distributed.coded`
imports it.
"""
from __future__ import annotations

import os
import time
import uuid
import weakref
from typing import Callable, Sequence

from gcc.distributed.inject import TaskFault

__all__ = ["CodedWorker", "actor_pool", "wait_actors"]


class CodedWorker:
    """A coded worker kept on its Dask worker as an actor (``coded_compute(..., engine="actors")``).

    :meth:`run` computes f on one coded input under its :class:`TaskFault`, like the task engine's
    task. Both methods are coroutines, so they run on the worker's event loop with no hand-over to
    a thread (a few ms less per batch on a small machine): calls are served one at a time (a
    lock: a straggler still sleeping holds its worker, as a task would), f runs on the loop
    thread, and an injected sleep ends early when :meth:`cancel` names the running batch.
    """

    def __init__(self):
        self._batch = None
        self._lock = self._stop = None     # made on the worker's event loop, at the first call
        try:
            from distributed import get_worker

            self._address = get_worker().address
        except ValueError:  # made outside a worker (tests)
            self._address = None

    async def run(self, f: Callable, x, index: int, fault: TaskFault | None, batch: str):
        import asyncio

        if self._lock is None:
            self._lock, self._stop = asyncio.Lock(), asyncio.Event()
        async with self._lock:
            self._batch = batch
            self._stop.clear()
            start_wall = time.time()
            t0 = time.perf_counter()
            y = f(x)
            compute_s = time.perf_counter() - t0
            injected = fault.injected_s(compute_s) if fault is not None else 0.0
            slept, interrupted = 0.0, False
            if injected > 0:
                t1 = time.perf_counter()
                if fault.interruptible:
                    try:
                        await asyncio.wait_for(self._stop.wait(), injected)
                        interrupted = True
                    except asyncio.TimeoutError:
                        pass
                else:
                    await asyncio.sleep(injected)
                slept = time.perf_counter() - t1
            return y, {"compute_s": compute_s, "injected_s": max(injected, 0.0), "slept_s": slept,
                       "interrupted": interrupted, "busy_s": time.perf_counter() - t0, "index": index,
                       "worker": self._address, "pid": os.getpid(), "start_wall": start_wall}

    async def cancel(self, batch: str) -> None:
        if batch == self._batch and self._stop is not None:
            self._stop.set()


_POOLS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def actor_pool(client, addresses: Sequence[str]) -> list:
    """One :class:`CodedWorker` actor per address, made once per client and kept.

    Parameters
    ----------
    client : distributed.Client
    addresses : sequence of str
        Worker addresses, one actor pinned to each.

    Returns
    -------
    list of distributed.Actor
        In the order of ``addresses``.
    """
    pools = _POOLS.setdefault(client, {})
    key = tuple(addresses)
    if key not in pools:
        tag = uuid.uuid4().hex[:8]
        futures = [client.submit(CodedWorker, actor=True, workers=[a], allow_other_workers=False, pure=False,
                                 key=f"gcc-coded-worker-{tag}-{i}") for i, a in enumerate(addresses)]
        pools[key] = (futures, [fut.result() for fut in futures])  # the futures keep the actors alive
    return pools[key][1]


async def wait_actors(calls, indices, arrive, remaining: float) -> bool:
    """Feed ``arrive(index, result, failed)`` the actor calls' results as they complete, on the client's loop.

    ``calls[j]`` is the call of coded worker ``indices[j]``; returns True if ``arrive`` asked to stop,
    False when the ``remaining`` seconds ran out or every call answered.
    """
    import asyncio

    async def one(i, call):
        try:
            return i, await call, False
        except Exception:  # noqa: BLE001 - an exception in f: that worker failed
            return i, None, True

    pending = {asyncio.ensure_future(one(i, call)) for i, call in zip(indices, calls)}
    end = time.perf_counter() + max(remaining, 1e-3)
    try:
        while pending:
            done, pending = await asyncio.wait(pending, timeout=max(end - time.perf_counter(), 0.0),
                                               return_when=asyncio.FIRST_COMPLETED)
            if not done:
                return False
            for task in done:
                if arrive(*task.result()):
                    return True
        return False
    finally:
        for task in pending:
            task.cancel()
