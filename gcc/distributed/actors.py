"""The engine of :func:`gcc.distributed.coded_compute`: one kept :class:`CodedWorker` actor per worker.

A batch is one coroutine on the client's event loop (:func:`dispatch_batch`): the N calls go straight
to the workers (a :class:`distributed.Actor`'s ``actor_execute``; through the scheduler when Dask's
``distributed.client.direct-to-workers`` is ``False``), and the workers still busy once the master
can decode are told to stop.
"""
from __future__ import annotations

import asyncio
import os
import time
import uuid
import weakref
from typing import Callable, Sequence

from gcc.distributed.inject import TaskFault

__all__ = ["CodedWorker", "actor_pool", "dispatch_batch"]


class CodedWorker:
    """A coded worker kept on its Dask worker as an actor.

    :meth:`run` computes f on one coded input and acts out its :class:`TaskFault` (sleeps, or
    the process dies). Calls are served one at a time (a straggler still sleeping holds its
    worker), on the worker's event loop; an injected sleep ends early when :meth:`cancel` names
    the running batch.
    """

    def __init__(self):
        self._batch = None
        self._lock = self._stop = None     # made on the worker's event loop, at the first call

    async def run(self, f: Callable, x, fault: TaskFault | None, batch: str):
        if self._lock is None:
            self._lock, self._stop = asyncio.Lock(), asyncio.Event()
        async with self._lock:
            self._batch = batch
            self._stop.clear()
            t0 = time.perf_counter()
            if fault is not None and fault.die:
                await asyncio.sleep(fault.die_after_s)
                # A crash, not an exception: the process vanishes without replying (its Nanny
                # restarts it under a new address).
                os._exit(17)
            y = f(x)
            compute_s = time.perf_counter() - t0
            injected = max(fault.injected_s(compute_s), 0.0) if fault is not None else 0.0
            t1 = time.perf_counter()
            if injected > 0:
                stop = self._stop if fault.interruptible else asyncio.Event()
                try:
                    await asyncio.wait_for(stop.wait(), injected)
                except asyncio.TimeoutError:
                    pass
            end = time.perf_counter()
            return y, {"compute_s": compute_s, "slept_s": end - t1, "busy_s": end - t0}

    async def cancel(self, batch: str) -> None:
        if batch == self._batch and self._stop is not None:
            self._stop.set()


_POOLS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def actor_pool(client, addresses: Sequence[str], timeout: float = 60.0) -> list:
    """One :class:`CodedWorker` actor per address, made once per client and kept.

    Returns ``(worker address, actor key)`` per address; None where the worker did not make its
    actor within ``timeout`` seconds (then the pool is not kept).
    """
    from distributed import wait

    pools = _POOLS.setdefault(client, {})
    key = tuple(addresses)
    if key not in pools:
        tag = uuid.uuid4().hex[:8]
        keys = [f"gcc-coded-worker-{tag}-{i}" for i in range(len(addresses))]
        futures = [client.submit(CodedWorker, actor=True, workers=[a], allow_other_workers=False, pure=False,
                                 key=k) for k, a in zip(keys, addresses)]
        try:
            wait(futures, timeout=timeout)
        except TimeoutError:   # a worker gone before it made its actor: a straggler of every batch
            pass
        targets = [(a, k) if fut.status == "finished" else None
                   for a, k, fut in zip(addresses, keys, futures)]
        if None in targets:
            return targets
        pools[key] = (futures, targets)   # the futures keep the actors alive
    return pools[key][1]


# Calls still running when their batch was decoded: kept referenced until they end.
_BACKGROUND: set = set()


def _forget(task) -> None:
    _BACKGROUND.discard(task)
    if not task.cancelled():
        task.exception()   # read: a lost worker's error is already counted as a straggler


def _background(task) -> None:
    _BACKGROUND.add(task)
    task.add_done_callback(_forget)


def _worker_rpc(client, address: str):
    if client.direct_to_workers is False:   # asked to reach the workers only through the scheduler
        from distributed.actor import ProxyRPC

        return ProxyRPC(client.scheduler, address)
    return client.rpc(address)


async def dispatch_batch(client, targets, calls, indices, arrive, remaining: float, batch: str) -> bool:
    """One batch on the client's loop: call, feed ``arrive`` until it says stop, stop the rest.

    ``targets`` are :func:`actor_pool`'s (None: a failed call), ``calls`` the ``(f, x, fault)`` of
    each, ``indices`` their coded workers; ``arrive(index, result, error)`` (``error``: why the call
    failed, its exception's ``repr``; '' for a result) returns True to stop.
    ``batch`` tags the calls (:meth:`CodedWorker.cancel` stops only its sleeps). Returns True if
    ``arrive`` stopped it, False when ``remaining`` seconds ran out or every call answered.
    """
    from distributed.protocol import to_serialize

    async def one(i, target, args):
        if target is None:
            return i, None, "no CodedWorker actor on that worker (unknown, or gone before it made one)"
        try:
            reply = await _worker_rpc(client, target[0]).actor_execute(
                actor=target[1], function="run", args=[to_serialize(a) for a in (*args, batch)], kwargs={})
        except Exception as err:   # noqa: BLE001 - no actor, the worker gone: a straggler
            return i, None, repr(err)
        if reply.get("status") != "OK":          # an exception in f: that worker failed
            return i, None, repr(reply.get("exception"))
        return i, reply["result"], ""

    tasks = {asyncio.ensure_future(one(i, t, args)): t for i, t, args in zip(indices, targets, calls)}
    pending, stop = set(tasks), False
    end = time.perf_counter() + max(remaining, 1e-3)
    try:
        while pending and not stop:
            done, pending = await asyncio.wait(pending, timeout=max(end - time.perf_counter(), 0.0),
                                               return_when=asyncio.FIRST_COMPLETED)
            if not done:
                break
            for task in done:
                if not stop and arrive(*task.result()):
                    stop = True
        return stop
    finally:
        # The workers still busy stop their injected sleep now; their answers are not awaited.
        for task in pending:
            _background(task)
            _background(asyncio.ensure_future(_stop(client, tasks[task], batch)))


async def _stop(client, target, batch: str) -> None:
    """Tell one worker to end this batch's sleep (nothing to do for a worker gone)."""
    try:
        await _worker_rpc(client, target[0]).actor_execute(actor=target[1], function="cancel", args=[batch],
                                                          kwargs={})
    except Exception:  # noqa: BLE001 - a worker gone, or the client closing: nothing left to stop
        pass
