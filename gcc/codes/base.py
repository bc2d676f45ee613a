"""The interface shared by every code: linear encoder and decoder operators.

A code places K data points at ``alphas`` and N workers at ``betas`` (both ascending in
[-1, 1]). Encoding fits a function u_enc through (alpha_k, X_k) and sends u_enc(beta_n) to
worker n; decoding fits u_dec through the received (beta_v, Y_v) and returns u_dec(alpha_k).
All four codes of the companion are linear in the data, so encoding is one (N, K) matrix
product and decoding one (K, |F|) matrix product, with the decoder built once per received
set F and cached (at most :attr:`Code.decoder_cache_bytes`, 256 MiB by default, least recently
used dropped; an operator float64 cannot hold is an error, never a silent inf). The result of a
decode depends on its arguments only, never on which sets were decoded before. A code that fits
the outputs more cheaply than it builds the operator (:class:`gcc.SplineCode` when they have fewer
columns than K) decodes so instead (:meth:`Code._decode_direct`).
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..backend import DenseOperator, is_torch, to_numpy
from ..points import code_points
from ..splines import KNOT_GAP, Knots
from ..validation import (BOOL, ArrayLike, check_choice, check_finite, check_int, check_leading_dim,
                          check_received, invalid, raise_invalid, validate)

__all__ = ["Code", "block_received", "block_received_many", "CODE_POINT_GAP"]

#: smallest spacing of user-given points: KNOT_GAP of the domain [-1, 1] (so that every set of
#: such points also passes the relative rule of :data:`gcc.splines.KNOTS`)
CODE_POINT_GAP = 2 * KNOT_GAP


def _block_sizes(n_workers, stragglers, owner):
    N = check_int(n_workers, "n_workers", owner, minimum=1)
    S = check_int(stragglers, "stragglers", owner, minimum=0, maximum=N - 1,
                  constraint="an int in [0, n_workers - 1]")
    return N, S


def block_received(n_workers, stragglers, start):
    """Received workers when the ``S`` consecutive workers ``start .. start+S-1`` straggle.

    Parameters
    ----------
    n_workers : int
        N, ``>= 1``.
    stragglers : int
        S, ``0 <= S < N``.
    start : int
        First straggler, in ``[0, N - S]`` (several blocks at once: :func:`block_received_many`).

    Returns
    -------
    ndarray of int, shape (N - S,)
        Ascending indices of the received workers.

    Examples
    --------
    >>> from gcc.codes.base import block_received
    >>> block_received(6, 2, 1)
    array([0, 3, 4, 5])
    """
    owner = "block_received"
    N, S = _block_sizes(n_workers, stragglers, owner)
    s = check_int(start, "start", owner, minimum=0, maximum=N - S,
                  constraint=f"an int in [0, n_workers - stragglers] = [0, {N - S}] (several blocks: "
                             "block_received_many)")
    j = np.arange(N - S)
    return j + np.where(j >= s, S, 0)


def block_received_many(n_workers, stragglers, starts):
    """:func:`block_received` for b blocks at once: one row per first straggler.

    Parameters
    ----------
    n_workers, stragglers : int
        N and S, ``0 <= S < N``.
    starts : array_like of int, shape (b,)
        First straggler of each block, in ``[0, N - S]``.

    Returns
    -------
    ndarray of int, shape (b, N - S)

    Examples
    --------
    >>> from gcc.codes.base import block_received_many
    >>> block_received_many(4, 1, [0, 3])
    array([[1, 2, 3],
           [0, 1, 2]])
    """
    owner = "block_received_many"
    N, S = _block_sizes(n_workers, stragglers, owner)
    starts = validate(starts, ArrayLike(ndim=1, dtype=np.intp, description=f"a 1-D array of ints in [0, {N - S}]"),
                      "starts", owner)
    bad = np.flatnonzero((starts < 0) | (starts > N - S))
    if bad.size:
        raise invalid("starts", owner, f"a 1-D array of ints in [0, {N - S}]", starts,
                      f"starts[{int(bad[0])}] = {int(starts[bad[0]])} is out of range")
    j = np.arange(N - S)
    return j + np.where(j >= starts[:, None], S, 0)


class Code:
    """Base class of a linear coded-computing scheme.

    Parameters
    ----------
    n_inputs : int
        K, the number of data points, ``>= 1``.
    n_workers : int
        N, the number of workers, ``>= 1`` (codes that need ``N >= K`` say so).
    alphas : array_like, shape (K,), optional
        Data points, strictly increasing, finite, in [-1, 1], consecutive ones at least
        ``2e-12`` apart (:class:`gcc.splines.Knots`: closer points are near-coincident). Default
        from ``points``.
    betas : array_like, shape (N,), optional
        Worker points, as ``alphas``. Default from ``points``.
    points : {"chebyshev", "equispaced"}
        "chebyshev": alphas are Chebyshev points of the first kind, betas of the second kind
        (the paper's experiments). "equispaced": alphas are the K cell centres
        ``-1 + (2k-1)/K`` and betas ``linspace(-1, 1, N)``.

    Attributes
    ----------
    n_inputs, n_workers : int
    alphas : ndarray, shape (K,)
    betas : ndarray, shape (N,)

    Notes
    -----
    Arguments are validated in the constructor, so that a misconfigured code fails where
    it is made; the instance is then read-only (its operators are cached). Use
    :meth:`with_params` to make a modified copy, e.g. for a grid search over lambda.

    Memory: the decoders of the received sets seen are cached within
    :attr:`decoder_cache_bytes` (256 MiB by default, with their float32/torch copies; settable
    per code, least recently used dropped), so a long simulation with a new received set per
    trial holds a bounded amount.
    """

    #: whether the code needs at least as many workers as inputs
    _needs_n_workers_ge_n_inputs = False
    #: whether the operators can overflow float64 (then each is checked once, when built); the
    #: spline, Berrut and B-spline operators are finite by construction (bounded weights)
    _operators_may_overflow = False
    #: whether a received set can be too small to decode (:meth:`_check_decodable`)
    _has_threshold = False
    #: maximum number of cached decoders (least recently used are dropped)
    decoder_cache_size = 4096
    #: default of :attr:`decoder_cache_bytes`
    DECODER_CACHE_BYTES = 256 * 2 ** 20
    #: :meth:`block_estimates` works on chunks of blocks whose arrays hold about this many floats
    block_chunk_elements = 4_000_000

    def __init__(self, n_inputs, n_workers, alphas=None, betas=None, points="chebyshev"):
        owner = type(self).__name__
        self._n_inputs = check_int(n_inputs, "n_inputs", owner, minimum=1)
        if self._needs_n_workers_ge_n_inputs:
            self._n_workers = check_int(n_workers, "n_workers", owner, minimum=self._n_inputs,
                                        constraint="an int >= n_inputs")
        else:
            self._n_workers = check_int(n_workers, "n_workers", owner, minimum=1)
        self._points = check_choice(points, "points", owner, ("chebyshev", "equispaced"))
        default_alphas, default_betas = code_points(self._n_inputs, self._n_workers, self._points)
        self._alphas_param, self._betas_param = alphas, betas
        self._alphas = default_alphas if alphas is None else validate(
            alphas, Knots(size=self._n_inputs, size_name="n_inputs", gap=CODE_POINT_GAP, relative=False),
            "alphas", owner)
        self._betas = default_betas if betas is None else validate(
            betas, Knots(size=self._n_workers, size_name="n_workers", gap=CODE_POINT_GAP, relative=False),
            "betas", owner)
        self._alphas.flags.writeable = False
        self._betas.flags.writeable = False
        self._encoder = None
        self._decoders = OrderedDict()
        self._decoder_bytes = 0        # held by self._decoders (DenseOperator.nbytes)
        self._decoder_cache_bytes = self.DECODER_CACHE_BYTES

    # ------------------------------------------------------------------ parameters
    @property
    def n_inputs(self) -> int:
        return self._n_inputs

    @property
    def n_workers(self) -> int:
        return self._n_workers

    @property
    def alphas(self) -> np.ndarray:
        return self._alphas

    @property
    def betas(self) -> np.ndarray:
        return self._betas

    @property
    def points(self) -> str:
        return self._points

    @property
    def decoder_cache_bytes(self) -> int:
        """Memory the cached decoders may hold, in bytes (default 256 MiB; 0 caches none).

        Settable per code (an int >= 0); least recently used decoders are dropped first.

        Examples
        --------
        >>> import gcc
        >>> code = gcc.BerrutCode(3, 8)
        >>> code.decoder_cache_bytes // 2 ** 20
        256
        >>> code.decoder_cache_bytes = 2 ** 20
        """
        return self._decoder_cache_bytes

    @decoder_cache_bytes.setter
    def decoder_cache_bytes(self, value):
        self._decoder_cache_bytes = check_int(value, "decoder_cache_bytes", type(self).__name__, minimum=0)
        self._trim_decoders()

    @property
    def cached_decoder_bytes(self) -> int:
        """Bytes the cached decoders hold now (at most :attr:`decoder_cache_bytes`)."""
        return self._decoder_bytes

    def _extra_params(self) -> dict:
        """Constructor parameters specific to a subclass (in signature order)."""
        return {}

    def get_params(self) -> dict:
        """Constructor arguments of this code (scikit-learn style)."""
        params = {"n_inputs": self._n_inputs, "n_workers": self._n_workers}
        params.update(self._extra_params())
        params.update(alphas=self._alphas_param, betas=self._betas_param, points=self._points)
        return params

    def with_params(self, **changes) -> "Code":
        """A new code of the same class with some constructor arguments replaced."""
        params = self.get_params()
        unknown = set(changes) - set(params)
        if unknown:
            raise_invalid(sorted(unknown)[0], f"{type(self).__name__}.with_params",
                          "a constructor argument (" + ", ".join(params) + ")", changes)
        params.update(changes)
        return type(self)(**params)

    def __repr__(self):
        shown = {k: v for k, v in self.get_params().items()
                 if not (k in ("alphas", "betas") and v is None)}
        args = ", ".join(f"{k}={v!r}" for k, v in shown.items())
        return f"{type(self).__name__}({args})"

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_encoder"] = None  # caches may hold device tensors; rebuild after unpickling
        state["_decoders"], state["_decoder_bytes"] = OrderedDict(), 0
        return state

    # ------------------------------------------------------------------ operators
    def _build_encoder(self) -> np.ndarray:  # pragma: no cover - abstract
        """Encoder matrix, shape (N, K)."""
        raise NotImplementedError

    def _build_decoder(self, received: tuple) -> np.ndarray:  # pragma: no cover - abstract
        """Uncached decoder matrix for validated ``received``, shape (K, len(received))."""
        raise NotImplementedError

    def _decode_direct(self, Y, key):
        """Estimates (K, *out) without the received set's decoder operator, or None (the operator).

        A code that can fit the outputs more cheaply than it builds the set's decoder overrides
        this (:class:`gcc.SplineCode`); ``Y`` is validated, ``key`` the received set as a tuple.
        """
        return None

    def _encoder_op(self) -> DenseOperator:
        if self._encoder is None:
            E = self._build_encoder()
            if self._operators_may_overflow and not np.isfinite(E).all():
                raise invalid("n_inputs", type(self).__name__, "a size whose encoder float64 can hold",
                              self._n_inputs, "the encoder matrix has entries beyond 1e308: the "
                              "interpolation problem is too ill-conditioned")
            self._encoder = DenseOperator(E, check_finite=False)
        return self._encoder

    def _received(self, received, owner):
        if received is None:
            return tuple(range(self._n_workers))
        key = check_received(received, self._n_workers, owner)
        if self._has_threshold:
            self._check_decodable(key, received, owner)
        return key

    def _check_decodable(self, key, received, owner):
        """Raise the contract error for a received set the code cannot decode (default: none)."""

    def _decoder_op(self, received: tuple, owner: str) -> DenseOperator:
        op = self._decoders.get(received)
        if op is None:
            D = self._build_decoder(received)
            if self._operators_may_overflow and not np.isfinite(D).all():
                raise invalid("received", owner, "a received set whose decoder float64 can hold",
                              np.asarray(received), "the decoder matrix has entries beyond 1e308: the "
                              "interpolation problem is too ill-conditioned")
            op = DenseOperator(D, check_finite=False)
            self._decoders[received] = op
            self._decoder_bytes += op.nbytes
            self._trim_decoders()
        else:
            self._decoders.move_to_end(received)
        return op

    def _trim_decoders(self):
        """Drop least recently used decoders beyond :attr:`decoder_cache_size` or the byte bound."""
        decoders = self._decoders
        while decoders and (len(decoders) > self.decoder_cache_size
                            or self._decoder_bytes > self._decoder_cache_bytes):
            self._decoder_bytes -= decoders.popitem(last=False)[1].nbytes

    def _apply_decoder(self, key, Y, owner):
        op = self._decoder_op(key, owner)
        held = op.nbytes
        out = op.apply(Y)
        if op.nbytes != held and key in self._decoders:   # a float32 / torch copy was cached
            self._decoder_bytes += op.nbytes - held
            self._trim_decoders()
        return out

    def clear_cache(self, encoder=True) -> None:
        """Drop the cached decoders, and the encoder unless ``encoder=False``.

        Converted (float32, torch dtype/device) copies of the operators go with them, so every
        set is new again. What depends only on the code's parameters and ``len(received)``
        (the spline through all N points of :class:`gcc.SplineCode`) is kept.
        """
        validate(encoder, BOOL, "encoder", f"{type(self).__name__}.clear_cache")
        if encoder:
            self._encoder = None
        self._decoders.clear()
        self._decoder_bytes = 0

    def encoder_matrix(self) -> np.ndarray:
        """Encoder operator E, shape (N, K): ``coded = E @ X`` along axis 0 (read-only)."""
        return self._encoder_op().matrix

    def decoder_matrix(self, received=None) -> np.ndarray:
        """Decoder operator D_F, shape (K, len(received)), cached per received set (read-only).

        Parameters
        ----------
        received : sequence of int or bool mask of shape (N,), optional
            Strictly ascending indices of the non-straggling workers; default all N.
        """
        name = f"{type(self).__name__}.decoder_matrix"
        return self._decoder_op(self._received(received, name), name).matrix

    # ------------------------------------------------------------------ data path
    def encode(self, X, check_finite=True):
        """Coded inputs of the N workers: u_enc(beta_n).

        Parameters
        ----------
        X : ndarray or torch.Tensor, shape (K, *shape)
            Data points x_1..x_K stacked along axis 0, any trailing shape.
        check_finite : bool
            Raise on NaN/inf in X (one reduction; pass False to skip it in hot GPU loops).

        Returns
        -------
        ndarray or torch.Tensor, shape (N, *shape)
            Same library, dtype (floating) and device as X; one matrix product.

        Examples
        --------
        >>> import numpy as np
        >>> import gcc
        >>> code = gcc.BerrutCode(n_inputs=3, n_workers=5)
        >>> code.encode(np.ones((3, 2))).shape
        (5, 2)
        """
        owner = f"{type(self).__name__}.encode"
        X = _as_array(X, "X", owner)
        check_leading_dim(X, self._n_inputs, "X", owner, "n_inputs")
        if check_finite is not True and check_finite is not False:
            validate(check_finite, BOOL, "check_finite", owner)
        if check_finite:
            _check_finite(X, "X", owner)
        return self._encoder_op().apply(X)

    def decode(self, Y, received=None, check_finite=True):
        """Estimates of f(x_1..x_K) from the outputs of the received workers.

        Parameters
        ----------
        Y : ndarray or torch.Tensor, shape (len(received), *out)
            Outputs of the workers in ``received``, in the same (ascending) order (real or
            complex: the decoders are linear).
        received : sequence of int or bool mask of shape (N,), optional
            Strictly ascending indices of the non-straggling workers; default all N. A code
            with a recovery threshold says so (:class:`gcc.LagrangeCode`: at least K without a
            least-squares ``degree``).
        check_finite : bool
            Raise on NaN/inf in Y.

        Returns
        -------
        ndarray or torch.Tensor, shape (K, *out)
            Same library, dtype (floating) and device as Y: one matrix product with the cached
            decoder of ``received`` (:meth:`decoder_matrix`), or, for a code that fits the outputs
            more cheaply (:class:`gcc.SplineCode` with fewer output columns than K), that fit
            (equal to the product up to rounding).

        Examples
        --------
        >>> import numpy as np
        >>> import gcc
        >>> code = gcc.BerrutCode(n_inputs=3, n_workers=5)
        >>> Y = code.encode(np.ones((3, 2)))        # f = identity; Berrut is exact on constants
        >>> est = code.decode(Y[[0, 2, 4]], received=[0, 2, 4])
        >>> est.shape, np.allclose(est, 1.0)
        ((3, 2), True)
        """
        owner = f"{type(self).__name__}.decode"
        key = self._received(received, owner)
        Y = _as_array(Y, "Y", owner)
        check_leading_dim(Y, len(key), "Y", owner, "len(received)")
        if check_finite is not True and check_finite is not False:
            validate(check_finite, BOOL, "check_finite", owner)
        if check_finite:
            _check_finite(Y, "Y", owner)
        est = self._decode_direct(Y, key)
        if est is not None:
            return est
        return self._apply_decoder(key, Y, owner)

    def block_estimates(self, Y, stragglers):
        """Decode every contiguous straggler block at once, or None where not available.

        The worst-case search over contiguous blocks (:func:`gcc.adversary.block_losses`)
        needs ``decode(Y[F_s], F_s)`` for the ``N - S + 1`` received sets
        ``F_s = block_received(N, S, s)``. A code with a batched formula overrides
        :meth:`_block_estimates`; the base class has none and returns None, and the caller
        then decodes block by block.

        Parameters
        ----------
        Y : array_like, shape (N, *out)
            Outputs of all N workers (real; numpy, or a torch tensor, which is copied to
            the CPU).
        stragglers : int
            S, the block length, ``0 <= S < N``.

        Returns
        -------
        ndarray of float64, shape (N - S + 1, K, *out), or None
            Entry ``s`` equals ``decode(Y[F_s], F_s)`` up to rounding.

        Examples
        --------
        >>> import numpy as np
        >>> import gcc
        >>> from gcc.codes.base import block_received
        >>> code = gcc.SplineCode(n_inputs=3, n_workers=8)
        >>> Y = np.sin(code.betas)
        >>> est = code.block_estimates(Y, 2)
        >>> est.shape
        (7, 3)
        >>> F = block_received(8, 2, 4)
        >>> np.allclose(est[4], code.decode(Y[F], F))
        True
        >>> gcc.LagrangeCode(3, 8).block_estimates(Y, 2) is None
        True
        """
        owner = f"{type(self).__name__}.block_estimates"
        N = self._n_workers
        S = check_int(stragglers, "stragglers", owner, minimum=0, maximum=N - 1,
                      constraint="an int in [0, n_workers - 1]")
        Y = to_numpy(_as_array(Y, "Y", owner))
        check_leading_dim(Y, N, "Y", owner, "n_workers")
        _check_finite(Y, "Y", owner)
        if Y.dtype.kind == "c":
            return None
        est = self._block_estimates(np.asarray(Y, dtype=np.float64).reshape(N, -1), S)
        return None if est is None else est.reshape((N - S + 1, self._n_inputs) + Y.shape[1:])

    def _block_estimates(self, Y, S):
        """Batched decoder of :meth:`block_estimates`: Y (N, m) float64 -> (N-S+1, K, m).

        None (the default) means "not available".
        """
        return None


def _as_array(X, name, owner):
    if is_torch(X) or isinstance(X, np.ndarray):
        return X
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError):
        raise_invalid(name, owner, "a numpy array or torch tensor", X)
    if arr.dtype.kind not in "biufc":
        raise_invalid(name, owner, "a numeric numpy array or torch tensor", X)
    return arr


def _check_finite(X, name, owner):
    if not is_torch(X) and X.dtype.kind not in "biufc":
        raise_invalid(name, owner, "a numeric numpy array or torch tensor", X,
                      f"dtype {X.dtype}")
    check_finite(X, name, owner)
