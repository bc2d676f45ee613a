"""Task assignments (codes) of coded partial gradient computation and of its baselines.

A code says which combinations of the K blocks ``W_k theta`` each worker computes, when each is
ready and how results form messages (Ozfatura et al., ICASSP 2019, Sec. 2). K is the number of workers here
(inputs in the GCC chapters); :func:`make_code` is a registry apart from :func:`gcc.codes.make`:
these codes assign exact gradient blocks, they do not encode and decode data points.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral

import numpy as np

from ..validation import (BOOL, SEED_OR_GENERATOR, ArrayLike, Interval, NoneOr, Options, Satisfies, caller, entry,
                          invalid, validate, validate_params)

__all__ = ["CPGCCode", "SCHEMES", "ALIASES", "LABELS", "SETTINGS", "SCHEME", "SETTING", "DEGREES",
           "canonical_scheme", "rcsc_code", "example_code_k4", "icassp_mds_code", "uncoded_cyclic_code",
           "mds_code", "gradient_code", "make_code"]

#: canonical scheme keys (lower case)
SCHEMES = ("rcsc", "icassp-mds", "uc-mmc", "uc-smc", "mds", "gc")
#: other names accepted for them
ALIASES = {"ccpr": "rcsc", "cpgc": "rcsc", "mcc": "mds", "cpgc-icassp": "icassp-mds"}
#: how figures and tables name each scheme
LABELS = {"rcsc": "RCSC", "icassp-mds": "ICASSP-MDS", "uc-mmc": "UC-MMC", "uc-smc": "UC-SMC",
          "mds": "MCC (MDS)", "gc": "GC"}
SETTINGS = ("computation", "communication")

#: a scheme name or alias, in any case (as :func:`gcc.codes.canonical` reads the codes' names)
SCHEME = Options(SCHEMES + tuple(ALIASES), case_sensitive=False)
#: the setting of a code (exact)
SETTING = Options(SETTINGS)


def _is_degree_vector(m) -> bool:
    """Ints (never bools), non-empty, starting at 1, non-decreasing."""
    try:
        seq = tuple(m)
    except TypeError:
        return False
    ints = all(isinstance(x, Integral) and not isinstance(x, (bool, np.bool_)) for x in seq)
    return ints and bool(seq) and seq[0] == 1 and all(a <= b for a, b in zip(seq, seq[1:]))


#: a degree vector m = (1, m_2, ..., m_r)
DEGREES = Satisfies(_is_degree_vector, "a non-empty, non-decreasing sequence of ints starting at 1 "
                    "(the first task is uncoded)")
_COUNT = Interval(Integral, 1, None)
#: the codes are dense K x r x K arrays: 4096 workers is 400 MB at r = 3, beyond it a MemoryError
MAX_WORKERS = 4096
_WORKERS = Interval(Integral, 1, MAX_WORKERS)


@validate_params({"scheme": SCHEME})
def canonical_scheme(scheme) -> str:
    """Map a scheme name or alias (any case) to its canonical key (see the module docstring).

    Examples
    --------
    >>> from gcc.cpgc import canonical_scheme
    >>> canonical_scheme("CCPR"), canonical_scheme("mcc"), canonical_scheme("uc-mmc")
    ('rcsc', 'mds', 'uc-mmc')
    """
    return ALIASES.get(scheme.lower(), scheme.lower())


@dataclass(frozen=True, eq=False)
class CPGCCode:
    """A task assignment: coefficient rows, their ready times in task units, their messages.

    Attributes
    ----------
    name : str
        Canonical scheme name.
    coefficients : ndarray, shape (n_workers, n_rows, n_blocks)
        Row ``j`` of worker ``i`` is the result ``sum_k coefficients[i, j, k] * W_k theta``.
    row_units : ndarray of float, shape (n_rows,)
        Task units after which row ``j`` is ready (at ``row_units[j] * Y_i`` for the speed
        ``Y_i = alpha + X_i``); positive, non-decreasing, equal within a message.
    row_messages : ndarray of int, shape (n_rows,)
        Message index of each row (the rows of one message arrive together).
    any_k : int or None
        Threshold codes (MDS, GC): everything is decodable once any ``any_k`` workers' messages
        have arrived, and nothing before.
    partial : bool
        Whether single blocks can be recovered (False for MDS and GC).
    setting : {"computation", "communication"}
        Coded computation (blocks of ``W theta``) or coded communication (partial gradients).
    load : int
        Task units of work per worker.
    params : dict
        Construction parameters (degrees, shifts, seed, ...), for provenance.
    """

    name: str
    coefficients: np.ndarray
    row_units: np.ndarray
    row_messages: np.ndarray
    any_k: int | None = None
    partial: bool = True
    setting: str = "computation"
    load: int = 1
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        owner = "CPGCCode"
        coef = validate(self.coefficients, ArrayLike(ndim=3, dtype=float, finite=True, description=(
            "a non-empty real array of shape (n_workers, n_rows, n_blocks)")), "coefficients", owner)
        if 0 in coef.shape:
            raise invalid("coefficients", owner, "a non-empty array of shape (n_workers, n_rows, n_blocks)",
                          coef, f"it has shape {coef.shape}")
        K, R, _ = coef.shape
        units = validate(self.row_units, ArrayLike(shape=(R,), dtype=float, finite=True), "row_units", owner)
        msgs = validate(self.row_messages, ArrayLike(shape=(R,), dtype=np.int64), "row_messages", owner)
        if msgs.min() != 0 or np.any(np.diff(msgs) < 0) or np.any(np.diff(msgs) > 1):
            raise invalid("row_messages", owner, "message indices 0, 1, ... in row order", msgs)
        # positive, non-decreasing, and equal for the rows of one message (they arrive together)
        if units.min() <= 0 or np.any(np.diff(units) < 0) or np.any(np.diff(units)[np.diff(msgs) == 0] != 0):
            raise invalid("row_units", owner, "positive, non-decreasing task units, equal within a message",
                          units)
        validate(self.any_k, NoneOr(Interval(Integral, 1, K)), "any_k", owner)
        validate(self.partial, BOOL, "partial", owner)
        validate(self.setting, SETTING, "setting", owner)
        validate(self.load, _COUNT, "load", owner)
        object.__setattr__(self, "coefficients", coef)
        object.__setattr__(self, "row_units", units)
        object.__setattr__(self, "row_messages", msgs)

    @property
    def n_workers(self) -> int:
        return self.coefficients.shape[0]

    @property
    def n_rows(self) -> int:
        return self.coefficients.shape[1]

    @property
    def n_blocks(self) -> int:
        return self.coefficients.shape[2]

    @property
    def n_messages(self) -> int:
        """Messages per worker."""
        return int(self.row_messages.max()) + 1

    @property
    def degrees(self) -> np.ndarray:
        """Number of blocks in each result, shape (n_workers, n_rows)."""
        return (self.coefficients != 0).sum(axis=2)

    def message_rows(self, message: int) -> np.ndarray:
        """Row indices that form message ``message`` of every worker."""
        return np.flatnonzero(self.row_messages == message)

    def message_units(self) -> np.ndarray:
        """Ready time of each message in task units, shape (n_messages,)."""
        return np.array([self.row_units[self.message_rows(j)[0]] for j in range(self.n_messages)])


@validate_params({"n_workers": _WORKERS, "degrees": DEGREES, "setting": SETTING, "seed": SEED_OR_GENERATOR})
def rcsc_code(n_workers: int, degrees=(1, 2, 3), seed=0, setting: str = "computation") -> CPGCCode:
    """Random circularly shifted code (RCSC) of the CCPR scheme.

    Parameters
    ----------
    n_workers : int
        K, also the number of blocks.
    degrees : sequence of int, length r
        Degree vector m = (1, m_2, ..., m_r), non-decreasing: message j of a worker is the sum of
        m_j blocks. L = sum(m) must not exceed K (the shifts are distinct).
    seed : int or numpy.random.Generator
        Draws the L distinct circular shifts in {0, ..., K-1}.
    setting : {"computation", "communication"}
        Coded computation: message j is ready after j task units (one pre-summed coded product
        each). Coded communication: the L partial gradients are computed in A-order and the sum of
        the newest m_j is sent after m_1 + ... + m_j of them (1, 3, 6 for m = (1, 2, 3)).

    Returns
    -------
    CPGCCode
        ``coefficients`` of shape (K, r, K), 0/1 entries.

    Notes
    -----
    Row l of the L x K matrix A is ``roll(arange(K), s_l)``; worker i's message j sums the blocks
    ``A[l, i]`` of the l in group j (Ozfatura, Ulukus and Gunduz, arXiv 1811.09271).

    Examples
    --------
    >>> from gcc.cpgc import rcsc_code
    >>> code = rcsc_code(4, degrees=(1, 2), seed=2)
    >>> code.params["shifts"], code.coefficients[0]        # worker 0: W_0, then W_1 + W_3
    ([0, 3, 1], array([[1., 0., 0., 0.],
           [0., 1., 0., 1.]]))
    >>> code.row_units, code.n_messages
    (array([1., 2.]), 2)
    """
    K, m = n_workers, tuple(map(int, degrees))
    L = sum(m)
    if L > K:   # the L shifts are distinct values in {0, ..., K-1}
        raise invalid("degrees", caller("rcsc_code"), f"a degree vector whose sum (the number of distinct "
                      f"shifts, {L}) is at most n_workers={K}", m)
    shifts = np.random.default_rng(seed).choice(K, size=L, replace=False)
    A = np.array([np.roll(np.arange(K), int(s)) for s in shifts])
    coef = np.zeros((K, len(m), K))
    start = 0
    workers = np.arange(K)
    for j, mj in enumerate(m):
        for l in range(start, start + mj):
            coef[workers, j, A[l]] = 1.0
        start += mj
    units = np.arange(1, len(m) + 1) if setting == "computation" else np.cumsum(m)
    load = len(m) if setting == "computation" else L
    return CPGCCode("rcsc", coef, units.astype(float), np.arange(len(m)), None, True, setting, load,
                    {"degrees": m, "shifts": [int(s) for s in shifts]})


def example_code_k4() -> CPGCCode:
    """The K = 4, r = 2 CCPR example of Ozfatura et al. (ICASSP 2019) (columns are workers).

    Message 1: W1, W2, W3, W4; message 2: W3+W4, W1+W3, W2+W4, W1+W2 (not circular shifts).

    Examples
    --------
    >>> from gcc.cpgc import example_code_k4
    >>> example_code_k4().coefficients[:, 1]      # second messages, one row per worker
    array([[0., 0., 1., 1.],
           [1., 0., 1., 0.],
           [0., 1., 0., 1.],
           [1., 1., 0., 0.]])
    """
    K = 4
    coef = np.zeros((K, 2, K))
    coef[np.arange(K), 0, np.arange(K)] = 1.0
    for i, pair in enumerate([(2, 3), (0, 2), (1, 3), (0, 1)]):
        coef[i, 1, list(pair)] = 1.0
    return CPGCCode("rcsc", coef, np.array([1.0, 2.0]), np.arange(2), None, True, "computation", 2,
                    {"degrees": (1, 2), "example": "CCPR K=4, r=2"})


@validate_params({"n_workers": _WORKERS, "n_tasks": _COUNT, "seed": SEED_OR_GENERATOR})
def icassp_mds_code(n_workers: int, n_tasks: int = 3, seed=0) -> CPGCCode:
    """Labelled hypothesis for the ICASSP-2019 CPGC: uncoded first task, MDS-coded later tasks.

    Worker i first computes W_i, then ``n_tasks - 1`` combinations of all K blocks with i.i.d.
    N(0, 1/K) coefficients (a Vandermonde code is ill conditioned at K = 40).

    Examples
    --------
    >>> from gcc.cpgc import icassp_mds_code
    >>> code = icassp_mds_code(5, n_tasks=2, seed=1)
    >>> code.coefficients.shape, code.degrees[0].tolist()     # uncoded first row, dense second
    ((5, 2, 5), [1, 5])
    """
    K, r = n_workers, n_tasks
    rng = np.random.default_rng(seed)
    coef = np.zeros((K, r, K))
    coef[np.arange(K), 0, np.arange(K)] = 1.0
    if r > 1:
        coef[:, 1:, :] = rng.standard_normal((K, r - 1, K)) / np.sqrt(K)
    return CPGCCode("icassp-mds", coef, np.arange(1.0, r + 1), np.arange(r), None, True, "computation", r,
                    {"n_tasks": r, "seed": seed if isinstance(seed, int) else None})


@validate_params({"n_workers": _WORKERS, "setting": SETTING, "multi_message": BOOL})
def uncoded_cyclic_code(n_workers: int, n_tasks: int = 3, multi_message: bool = True,
                        setting: str = "computation") -> CPGCCode:
    """Uncoded cyclic assignment: worker i computes W_i, W_{i+1}, ..., W_{i+r-1} (mod K) in order.

    ``multi_message=True`` is UC-MMC (each result is sent as soon as it is done, r messages);
    ``False`` is UC-SMC (one message carrying all r results after r task units).

    Examples
    --------
    >>> from gcc.cpgc import uncoded_cyclic_code
    >>> mmc = uncoded_cyclic_code(4, 2)
    >>> mmc.name, mmc.coefficients[3].argmax(axis=1), mmc.row_units
    ('uc-mmc', array([3, 0]), array([1., 2.]))
    >>> uncoded_cyclic_code(4, 2, multi_message=False).row_units     # one message after 2 units
    array([2., 2.])
    """
    K = n_workers
    r = validate(n_tasks, Interval(Integral, 1, K), "n_tasks", "uncoded_cyclic_code")
    coef = np.zeros((K, r, K))
    for j in range(r):
        coef[np.arange(K), j, (np.arange(K) + j) % K] = 1.0
    if multi_message:
        units, msgs, name = np.arange(1.0, r + 1), np.arange(r), "uc-mmc"
    else:
        units, msgs, name = np.full(r, float(r)), np.zeros(r, dtype=int), "uc-smc"
    return CPGCCode(name, coef, units, msgs, None, True, setting, r, {"n_tasks": r})


@validate_params({"n_workers": _WORKERS, "n_tasks": _COUNT, "seed": SEED_OR_GENERATOR})
def mds_code(n_workers: int, n_tasks: int = 3, k_bar: int | None = None, seed=0) -> CPGCCode:
    """(k_bar, K) MDS-coded computation with a real Gaussian generator.

    ``k_bar = ceil(K / r)`` blocks by default; worker i sends one coded product, timed as
    ``n_tasks`` task units (the paper's convention: (14, 40) is timed as 3 units).

    Examples
    --------
    >>> from gcc.cpgc import mds_code
    >>> code = mds_code(40, n_tasks=3)
    >>> code.any_k, code.coefficients.shape, code.partial     # (14, 40): any 14 workers
    (14, (40, 1, 14), False)
    """
    K, r = n_workers, n_tasks
    kb = int(np.ceil(K / r)) if k_bar is None else validate(k_bar, Interval(Integral, 1, K), "k_bar", "mds_code")
    G = np.random.default_rng(seed).standard_normal((K, kb)) / np.sqrt(kb)
    return CPGCCode("mds", G[:, None, :], np.array([float(r)]), np.zeros(1, dtype=int), kb, False,
                    "computation", r, {"n_tasks": r, "k_bar": kb})


@validate_params({"n_workers": _WORKERS})
def gradient_code(n_workers: int, load: int = 6) -> CPGCCode:
    """Gradient coding (Tandon et al. 2017) in the coded-communication setting.

    Worker i computes the partial gradients of parts i, ..., i+r-1 (r = ``load``) and sends one
    combination after r units; any K - r + 1 workers suffice (``coefficients``: the 0/1 support).

    Examples
    --------
    >>> from gcc.cpgc import gradient_code
    >>> code = gradient_code(40, load=6)
    >>> code.any_k, code.setting                 # any K - r + 1 = 35 workers
    (35, 'communication')
    """
    K = n_workers
    r = validate(load, Interval(Integral, 1, K), "load", "gradient_code")
    coef = np.zeros((K, 1, K))
    for j in range(r):
        coef[np.arange(K), 0, (np.arange(K) + j) % K] = 1.0
    return CPGCCode("gc", coef, np.array([float(r)]), np.zeros(1, dtype=int), K - r + 1, False,
                    "communication", r, {"load": r})


@validate_params({"scheme": SCHEME, "n_workers": _WORKERS, "degrees": DEGREES, "load": NoneOr(_COUNT),
                  "setting": NoneOr(SETTING), "seed": SEED_OR_GENERATOR})
def make_code(scheme: str, n_workers: int = 40, degrees=(1, 2, 3), load: int | None = None,
              setting: str | None = None, seed=0) -> CPGCCode:
    """Build the code of a named scheme with the paper's conventions (see the module docstring).

    Parameters
    ----------
    scheme : str
        One of :data:`SCHEMES` or an alias (:data:`ALIASES`), in any case.
    n_workers : int
        K, the number of workers (and of gradient blocks).
    degrees : sequence of int
        RCSC degree vector; it also fixes the default load: r = len(degrees) task units in coded
        computation, L = sum(degrees) partial gradients in coded communication.
    load : int, optional
        Override of the load of the baselines (r of UC-MMC/UC-SMC/MDS/ICASSP, the load of GC).
    setting : {"computation", "communication"}, optional
        Defaults to "communication" for GC and "computation" otherwise. MDS and the ICASSP variant
        exist only in coded computation, GC only in coded communication.
    seed : int or numpy.random.Generator
        Seed of the random construction (RCSC shifts, generators).

    Returns
    -------
    CPGCCode

    Examples
    --------
    >>> from gcc.cpgc import make_code
    >>> make_code("CCPR", n_workers=40).name, make_code("gc").load, make_code("uc-mmc").n_messages
    ('rcsc', 6, 3)
    >>> make_code("mds", setting="communication")
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'setting' parameter of make_code must be 'computation' for scheme 'mds'. Got 'communication' instead.
    """
    owner = caller("make_code")    # simulate names itself (validation.entry)
    name, K, m = canonical_scheme(scheme), n_workers, tuple(map(int, degrees))
    setting = setting or ("communication" if name == "gc" else "computation")
    if name in ("mds", "icassp-mds") and setting != "computation":
        raise invalid("setting", owner, f"'computation' for scheme {name!r}", setting)
    if name == "gc" and setting != "communication":
        raise invalid("setting", owner, "'communication' for scheme 'gc'", setting)
    if load is None:   # the default load must fit: blame n_workers, the argument the caller passed
        load = len(m) if setting == "computation" else sum(m)
        if load > K:
            what = "len(degrees)" if setting == "computation" else "sum(degrees)"
            raise invalid("n_workers", owner, f"an int >= the default load {what} = {load} of degrees {m} "
                          f"in coded {setting} (or pass a smaller load or degrees)", K)
    validate(load, Interval(Integral, 1, K), "load", owner)
    if name == "rcsc":
        with entry(owner):
            return rcsc_code(K, m, seed=seed, setting=setting)
    if name == "icassp-mds":
        return icassp_mds_code(K, load, seed=seed)
    if name in ("uc-mmc", "uc-smc"):
        return uncoded_cyclic_code(K, load, name == "uc-mmc", setting)
    if name == "mds":
        return mds_code(K, load, seed=seed)
    return gradient_code(K, load)
