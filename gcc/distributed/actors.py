"""The actor engine of :func:`gcc.distributed.coded_compute`: one kept :class:`CodedWorker` per worker.

A batch is one coroutine on the client's event loop (:func:`dispatch_batch`): it sends the N calls
straight to the workers (the ``actor_execute`` message a :class:`distributed.Actor` sends, but
without its per-call hand-over from the caller's thread, and without the scheduler relaying every
call and answer, as it does for an Actor of a client not opened with ``direct_to_workers=True``),
feeds the answers to the master as they come, and the moment the master can decode it tells the
workers still busy to stop (fire and forget). One hop from the caller's thread to the loop and
one back per batch. The master must reach the workers' addresses; where only the scheduler is
reachable, set Dask's ``distributed.client.direct-to-workers`` to ``False`` and the calls go
through the scheduler again.

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

__all__ = ["CodedWorker", "actor_pool", "actor_targets", "dispatch_batch"]


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
    return _pool(client, addresses)[1]


def actor_targets(client, addresses: Sequence[str]) -> list[tuple[str, str]]:
    """``(worker address, actor key)`` of each :func:`actor_pool` actor: what :func:`dispatch_batch` calls."""
    return _pool(client, addresses)[2]


def _pool(client, addresses: Sequence[str]):
    pools = _POOLS.setdefault(client, {})
    key = tuple(addresses)
    if key not in pools:
        tag = uuid.uuid4().hex[:8]
        keys = [f"gcc-coded-worker-{tag}-{i}" for i in range(len(addresses))]
        futures = [client.submit(CodedWorker, actor=True, workers=[a], allow_other_workers=False, pure=False,
                                 key=k) for k, a in zip(keys, addresses)]
        # the futures keep the actors alive
        pools[key] = (futures, [fut.result() for fut in futures], list(zip(addresses, keys)))
    return pools[key]


# Calls still running when their batch was decoded (a straggler told to stop, its answer unread):
# kept referenced until they end, so the event loop neither drops them nor logs their errors.
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
    """One batch of the actor engine, on the client's loop: call, gather until ``arrive`` stops, stop the rest.

    Parameters
    ----------
    client : distributed.Client
    targets : sequence of (str, str)
        ``(worker address, actor key)`` per call (:func:`actor_targets`).
    calls : sequence of tuple
        ``(f, x, index, fault)`` per call: :meth:`CodedWorker.run`'s arguments but the batch.
    indices : sequence of int
        Coded worker of each call.
    arrive : callable
        ``arrive(index, result, failed) -> bool``; True stops the wait.
    remaining : float
        Seconds before giving up.
    batch : str
        The batch's tag (:meth:`CodedWorker.cancel` stops only this batch's sleep).

    Returns
    -------
    bool
        True if ``arrive`` asked to stop; False when time ran out or every call answered.
    """
    import asyncio

    from distributed.protocol import to_serialize

    async def one(i, address, key, args):
        try:
            reply = await _worker_rpc(client, address).actor_execute(
                actor=key, function="run", args=[to_serialize(a) for a in (*args, batch)], kwargs={})
        except Exception:   # noqa: BLE001 - the worker (or the client's connections) gone: a straggler
            return i, None, True
        if reply.get("status") != "OK":          # an exception in f: that worker failed
            return i, None, True
        return i, reply["result"], False

    tasks = {asyncio.ensure_future(one(i, a, k, args)): j
             for j, (i, (a, k), args) in enumerate(zip(indices, targets, calls))}
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
            address, key = targets[tasks[task]]
            _background(asyncio.ensure_future(_stop(client, address, key, batch)))


async def _stop(client, address: str, key: str, batch: str) -> None:
    try:
        await _worker_rpc(client, address).actor_execute(actor=key, function="cancel", args=[batch], kwargs={})
    except Exception:  # noqa: BLE001 - a worker gone, or the client closing: nothing left to stop
        pass
