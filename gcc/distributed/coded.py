"""One coded batch on a Dask cluster: encode, one call per coded input on its own worker, decode the fastest.

Coded input i goes to the :class:`~gcc.distributed.actors.CodedWorker` of worker i (a coded worker
is a machine: nothing moves a straggler's work elsewhere), the scheduler off the path; the master
decodes as soon as its condition holds (:func:`coded_compute`) and tells the busy workers to stop.

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Learning-Theoretic Foundation
   for General Coded Computing: The Straggler Setting", arXiv 2608.28910.
"""
from __future__ import annotations

import dataclasses
import time
import uuid
from numbers import Real
from typing import Any, Callable, Sequence

import numpy as np

from gcc.backend import to_numpy
from gcc.distributed.actors import CodedWorker, actor_pool, dispatch_batch
from gcc.distributed.cluster import REPLACEMENT_WAIT_S, SECONDS, check_client, coded_workers
from gcc.distributed.inject import Injection
from gcc.validation import (NAME, SEED_OR_GENERATOR, Callable as CallableConstraint, HasAttributes, InstanceOf,
                            Interval, NoneOr, check_int, invalid, validate_params)

__all__ = ["coded_compute", "CodedResult", "DeadlineError", "ModelRef", "ModelPlugin", "CodedWorker",
           "actor_pool", "demo_mlp", "loaded_model", "model_load_counts", "payload_bytes", "stack_outputs"]

#: what :func:`coded_compute` needs of a code (checked before the client is touched)
CODE = HasAttributes(("encode", "decode", "n_workers"), callables=("encode", "decode"),
                     description="a code with encode(), decode() and n_workers (e.g. gcc.SplineCode)")


class DeadlineError(TimeoutError):
    """Too few workers answered in time to decode.

    Attributes
    ----------
    deadline : float
        The deadline (or overall timeout) in seconds.
    answered : int
        Results that arrived before it.
    needed : int
        Results the decoder needed.
    failed : int
        Calls that failed (an exception, or a worker process that died).
    error : str
        Why the first failed call failed (its exception's ``repr``), '' if none failed.
    """

    def __init__(self, deadline: float, answered: int, needed: int, n_workers: int, what: str = "deadline",
                 failed: int = 0, error: str = ""):
        self.deadline, self.answered, self.needed, self.n_workers = deadline, answered, needed, n_workers
        self.failed, self.error = failed, error
        if failed and n_workers - failed < needed:
            when = f"and {failed} failed, well before the {what} of {deadline:.3g} s"
        else:
            when = f"before the {what} of {deadline:.3g} s" + (f" ({failed} failed)" if failed else "")
        super().__init__(f"Only {answered} of {n_workers} workers answered {when}; decoding needs {needed}."
                         + (f" The first failure: {error}" if error else ""))


# Per worker process: models loaded by name, and how often each was loaded
# (tests check that a DNN is loaded once per worker, not once per call).
_MODEL_CACHE: dict[str, Any] = {}
_MODEL_LOADS: dict[str, int] = {}


def _load_model(name: str, loader: Callable[[], Any]):
    """The cached model ``name``, loaded by ``loader`` the first time."""
    model = _MODEL_CACHE.get(name)
    if model is None:
        model = _MODEL_CACHE[name] = loader()
        _MODEL_LOADS[name] = _MODEL_LOADS.get(name, 0) + 1
    return model


def loaded_model(name: str):
    """The model this process loaded under ``name`` (a :class:`ModelRef`'s), or None (run it on a worker)."""
    return _MODEL_CACHE.get(name)


def model_load_counts() -> dict[str, int]:
    """How many times each named model was loaded in this process (run it on the workers)."""
    return dict(_MODEL_LOADS)


class ModelRef:
    """A function given by name: the model is loaded once per worker process, then cached.

    Only the name and the loader (a small picklable callable, e.g. a ``functools.partial`` of a
    module-level function) travel with each call; the weights never do.

    Parameters
    ----------
    name : str
        Cache key; two refs with the same name share the loaded model.
    loader : callable
        ``loader() -> model``, where ``model(x)`` computes f on a batch.
    torch_io : bool
        Convert numpy inputs to float32 torch tensors (and outputs back to numpy)
        so a torch model can be fed numpy-coded inputs; run under ``torch.no_grad``.
    """

    @validate_params({"name": NAME, "loader": CallableConstraint()})
    def __init__(self, name: str, loader: Callable[[], Any], torch_io: bool = False):
        self.name, self.loader, self.torch_io = name, loader, torch_io

    def __call__(self, x):
        model = _load_model(self.name, self.loader)
        if not self.torch_io:
            return model(x)
        import torch

        was_numpy = isinstance(x, np.ndarray)
        with torch.no_grad():
            out = model(torch.as_tensor(x, dtype=torch.float32) if was_numpy else x)
        return to_numpy(out) if was_numpy else out

    def __repr__(self) -> str:
        return f"ModelRef({self.name!r})"


try:  # dask is optional for gcc, but this module is only imported with it.
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover
    _WorkerPlugin = object


class ModelPlugin(_WorkerPlugin):
    """Worker plugin that loads a :class:`ModelRef`'s model when a worker starts.

    ``client.register_plugin(ModelPlugin(ref))``: every worker, also one that joins or restarts
    later, loads the model before its first call.
    """

    def __init__(self, ref: ModelRef):
        self.ref = ref
        self.name = f"gcc-model-{ref.name}"

    def setup(self, worker):
        _load_model(self.ref.name, self.ref.loader)


def demo_mlp(d_in: int, d_hidden: int, d_out: int, seed: int = 0):
    """A small fixed-weight torch MLP ``d_in -> d_hidden -> d_out`` (tanh, softmax output), in eval mode.

    The weights come from ``seed``, so master and workers build the same network (examples and tests).
    """
    import torch

    gen = torch.Generator().manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(d_in, d_hidden), torch.nn.Tanh(), torch.nn.Linear(d_hidden, d_out), torch.nn.Softmax(dim=-1)
    )
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) / np.sqrt(p.shape[-1]))
    return model.eval()


def stack_outputs(outputs: Sequence[Any]):
    """Stack worker outputs along a new axis 0, numpy or torch alike."""
    if type(outputs[0]).__module__.startswith("torch"):
        import torch

        return torch.stack(list(outputs))
    return np.stack([np.asarray(o) for o in outputs])


def payload_bytes(x) -> int:
    """Bytes of an array's data (numpy ``nbytes``, torch ``numel * element_size``); 0 for anything else."""
    if hasattr(x, "nbytes") and not callable(x.nbytes):
        return int(x.nbytes)
    if hasattr(x, "element_size") and hasattr(x, "numel"):
        return int(x.numel() * x.element_size())
    return 0


@dataclasses.dataclass
class CodedResult:
    """Outcome of one coded batch.

    Attributes
    ----------
    estimates : array or tensor, shape (K, *out)
        Decoded estimates of f(x_k).
    received : numpy.ndarray of int
        Ascending indices of the coded workers whose results were decoded.
    workers_used : list of str
        Their Dask worker addresses, in the order of ``received``.
    latency_s : float
        Seconds from the start of encoding to the end of decoding.
    encode_s, decode_s : float
        Time spent encoding and decoding at the master.
    timings : list of dict
        One record per coded worker: ``index``, ``worker``, ``arrived``, ``used``, ``failed``,
        ``arrival_s`` (since the start), ``compute_s``, ``slept_s``, ``busy_s`` (``nan`` for
        workers that did not answer).
    n_workers : int
        N, the number of coded inputs.
    stopped_by : str
        ``"condition"`` (decoding condition met) or ``"deadline"``.
    bytes_sent, bytes_received : int
        Payload bytes of the coded inputs sent and of the outputs that arrived (array data only).
    """

    estimates: Any
    received: np.ndarray
    workers_used: list
    latency_s: float
    encode_s: float
    decode_s: float
    timings: list
    n_workers: int
    stopped_by: str
    bytes_sent: int = 0
    bytes_received: int = 0

    @property
    def slowest_used_busy_s(self) -> float:
        """Busy time (compute + injected delay) of the slowest worker that was used."""
        used = [t["busy_s"] for t in self.timings if t["used"]]
        return float(max(used)) if used else float("nan")

    @property
    def overhead_s(self) -> float:
        """Coordination overhead: latency beyond the slowest used worker's busy time."""
        return self.latency_s - self.slowest_used_busy_s



@validate_params({"code": CODE, "f": CallableConstraint(), "deadline": NoneOr(SECONDS), "timeout": SECONDS,
                  "replacement_wait": Interval(Real, 0, None),
                  "injection": NoneOr(InstanceOf(Injection, "a gcc.distributed.Injection")),
                  "seed": NoneOr(SEED_OR_GENERATOR)})
def coded_compute(client, code, X, f: Callable, *, n_stragglers: int | None = None, n_wait: int | None = None,
                  deadline: float | None = None, min_results: int | None = None,
                  injection: Injection | None = None, seed: int | np.random.Generator | None = None,
                  timeout: float = 60.0, workers: Sequence[str] | None = None,
                  replacement_wait: float = REPLACEMENT_WAIT_S) -> CodedResult:
    """Compute f on K inputs with a code over N Dask workers; decode from the fastest.

    Parameters
    ----------
    client : distributed.Client
    code : object
        Any code with ``n_workers``, ``encode(X) -> (N, ...)`` and ``decode(Y, received)`` (those of
        :mod:`gcc.codes`, :mod:`gcc.distributed.baselines`); ``is_decodable(received)``, if any, decides.
    X : numpy.ndarray or torch.Tensor, shape (K, *in)
        The master's inputs.
    f : callable
        What the workers compute on one coded input (numpy or torch), or a :class:`ModelRef`.
    n_stragglers : int, optional
        S; the master waits for the fastest ``N - S`` (default 0: all N).
    n_wait : int, optional
        Number of results to wait for, overriding ``N - n_stragglers``.
    deadline : float, optional
        Seconds after which to decode what arrived (at least ``min_results``), if ``n_wait`` did not.
    min_results : int, optional
        Fewest results decoded at the deadline (default ``code.n_inputs`` or 1; ``n_wait`` without one).
    injection : Injection, optional
        Straggler / fault scenario acted out in the workers.
    seed : int or numpy.random.Generator, optional
        Seed of the injection's random draws.
    timeout : float
        Overall bound in seconds on the wait when there is no deadline.
    workers : sequence of str, optional
        Worker addresses of the N coded workers (default: the first N connected, sorted).
    replacement_wait : float
        Seconds to wait for lost workers' replacements; one still missing, or lost mid-batch, is a straggler.

    Returns
    -------
    CodedResult

    Raises
    ------
    DeadlineError
        Fewer than the needed results arrived before the deadline (or timeout), or so many
        workers failed that decoding became impossible.
    ValueError
        Bad arguments, or a cluster of fewer than N workers (or fewer than N given in ``workers``).
    """
    owner = "coded_compute"
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n = int(code.n_workers)
    # Counts are checked before the cluster is used: a bad one must not cost a wait for workers.
    if n_stragglers is not None:
        check_int(n_stragglers, "n_stragglers", owner, 0, n - 1)
    n_wait = check_int(n - (n_stragglers or 0) if n_wait is None else n_wait, "n_wait", owner, 1, n)
    if min_results is None:
        min_results = n_wait if deadline is None else min(n_wait, int(getattr(code, "n_inputs", 1) or 1))
    min_results = check_int(min_results, "min_results", owner, 1, n_wait)
    check_client(client, owner)

    # Setup, not part of the latency: the workers, their actors and the injection's draws (it
    # emulates the environment, it is no work of the master's) are known before a request arrives.
    if workers is not None:
        addresses = list(workers)
        if len(addresses) < n:
            raise invalid("workers", owner, f"at least n_workers={n} distinct Dask worker addresses", addresses,
                          f"it has {len(addresses)}")
    else:
        addresses = coded_workers(client, n, owner, replacement_wait)
    bound = float(deadline) if deadline is not None else float(timeout)
    targets = actor_pool(client, addresses[:n], timeout=bound)
    # The plan covers every worker of the cluster (its positions are cluster workers, sorted), so
    # "worker 7 is slow" means the same machine for a scheme of 8 workers and one of 4.
    faults = injection.plan(max(len(addresses), n), rng)[:n] if injection is not None else [None] * n

    t0 = time.perf_counter()
    coded = code.encode(X)
    encode_s = time.perf_counter() - t0
    if len(coded) != n:
        raise invalid("code", owner, f"a code whose encoder gives n_workers={n} coded inputs", code,
                      f"it gave {len(coded)}")
    decodable = getattr(code, "is_decodable", None)
    # Positions past the connected workers belong to workers lost and not yet replaced: stragglers.
    live = list(range(min(len(addresses), n)))
    addresses = addresses[:n] + [None] * (n - len(live))
    outputs: dict[int, Any] = {}
    records = {i: {"index": i, "worker": addresses[i], "arrived": False, "used": False,
                   "failed": i not in live, "arrival_s": np.nan, "compute_s": np.nan, "slept_s": np.nan,
                   "busy_s": np.nan} for i in range(n)}
    failed, errors = set(range(len(live), n)), []

    def ready() -> bool:
        received = sorted(outputs)
        return bool(decodable(received)) if decodable is not None else len(received) >= n_wait

    def arrive(i, res, error) -> bool:
        """Record one result (or failure); True when waiting should stop."""
        if error:   # an exception in f, or a worker that died: a straggler, the others may suffice
            failed.add(i)
            errors.append(error)
            records[i]["failed"] = True
        else:
            y, timing = res
            outputs[i] = y
            records[i].update({k: timing[k] for k in ("compute_s", "slept_s", "busy_s")}, arrived=True,
                              arrival_s=time.perf_counter() - t0)
            if ready():
                return True
        return decodable is None and n - len(failed) < min_results  # impossible, however long we wait

    stop = False
    if decodable is not None or len(live) >= min_results:
        stop = client.sync(dispatch_batch, client, targets, [(f, coded[i], faults[i]) for i in live], live,
                           arrive, bound - (time.perf_counter() - t0 - encode_s), uuid.uuid4().hex[:12])
    stopped_by = "condition" if stop and ready() else None
    if stopped_by is None:
        enough = bool(decodable(sorted(outputs))) if decodable is not None else len(outputs) >= min_results
        if deadline is None or not enough or not outputs:
            raise DeadlineError(bound, len(outputs), n_wait if deadline is None else min_results, n,
                                what="deadline" if deadline is not None else "timeout", failed=len(failed),
                            error=errors[0] if errors else "")
        stopped_by = "deadline"

    received = np.array(sorted(outputs), dtype=int)
    t_dec = time.perf_counter()
    estimates = code.decode(stack_outputs([outputs[i] for i in received]), received)
    decode_s = time.perf_counter() - t_dec
    latency_s = time.perf_counter() - t0
    for i in received:
        records[i]["used"] = True
    return CodedResult(
        estimates=estimates, received=received, workers_used=[records[i]["worker"] for i in received],
        latency_s=latency_s, encode_s=encode_s, decode_s=decode_s, timings=[records[i] for i in range(n)],
        n_workers=n, stopped_by=stopped_by, bytes_sent=sum(payload_bytes(coded[i]) for i in live),
        bytes_received=sum(payload_bytes(y) for y in outputs.values()))
