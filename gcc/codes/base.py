"""The interface shared by every code: linear encoder and decoder operators.

A code places K data points at ``alphas`` and N workers at ``betas`` (ascending in [-1, 1]);
encoding is one (N, K) product, decoding one (K, |F|) product with the received set's decoder.
"""
from __future__ import annotations

import inspect
from collections import OrderedDict
from numbers import Integral

import numpy as np

from ..backend import convert, form_of, is_torch, matmul, to_numpy
from ..points import code_points
from ..splines import KNOT_GAP, Knots
from ..validation import (BOOL, Interval, Options, check_finite, check_int, check_received, entry, invalid,
                          validate, validate_params)

__all__ = ["Code", "block_received"]

#: smallest spacing of user-given points: KNOT_GAP of the domain [-1, 1]
_CODE_POINT_GAP = 2 * KNOT_GAP


@validate_params({"n_workers": Interval(Integral, 1, None), "stragglers": Interval(Integral, 0, None)})
def block_received(n_workers, stragglers, start):
    """Received workers when the ``S`` consecutive workers ``start .. start+S-1`` straggle.

    Parameters
    ----------
    n_workers : int
        N, ``>= 1``.
    stragglers : int
        S, ``0 <= S < N``.
    start : int
        First straggler, in ``[0, N - S]``.

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
    N, S = n_workers, stragglers
    if S >= N:
        raise invalid("stragglers", "block_received", "an int in [0, n_workers - 1]", S)
    s = check_int(start, "start", "block_received", minimum=0, maximum=N - S,
                  constraint=f"an int in [0, n_workers - stragglers] = [0, {N - S}]")
    j = np.arange(N - S)
    return j + np.where(j >= s, S, 0)


def parameter(name):
    """A read-only property: the constructor argument ``name`` as validated."""
    return property(lambda self: self._params[name], doc=f"The constructor argument {name!r} (read-only).")


def _check_data(X, size, name, size_name, owner, finite=True):
    """``X`` as a numeric numpy array (or the torch tensor) of ``size`` rows, finite if ``finite``."""
    if not is_torch(X):
        try:
            arr = np.asarray(X)
        except (TypeError, ValueError):
            arr = None
        if arr is None or arr.dtype.kind not in "biufc":
            raise invalid(name, owner, "a numeric numpy array or torch tensor", X)
        X = arr
    if tuple(X.shape)[:1] != (size,):
        raise invalid(name, owner, f"an array of shape ({size_name}, ...) with {size_name} = {size}", X,
                      f"its shape is {tuple(X.shape)}")
    validate(finite, BOOL, "check_finite", owner)
    return check_finite(X, name, owner) if finite else X


class Code:
    """Base class of a linear coded-computing scheme.

    The instance is read-only (:meth:`with_params` makes a modified copy); the decoders of the
    received sets seen last are cached, as many as fit in :attr:`DECODER_CACHE_BYTES`.

    Parameters
    ----------
    n_inputs : int
        K, the number of data points, in ``[1, 10**7]``.
    n_workers : int
        N, the number of workers, in ``[1, 10**7]`` (codes that need ``N >= K`` say so).
    alphas : array_like, shape (K,), optional
        Data points: strictly increasing in [-1, 1], at least 2e-12 apart. Default from ``points``.
    betas : array_like, shape (N,), optional
        Worker points, as ``alphas``. Default from ``points``.
    points : {"chebyshev", "equispaced"}
        Chebyshev points of the first kind (alphas) and second kind (betas), as the paper; or
        the cell centres ``-1 + (2k-1)/K`` and ``linspace(-1, 1, N)``.
    """

    _needs_n_workers_ge_n_inputs = False   # LCC: N >= K
    _operators_may_overflow = False        # LCC: each operator is checked once, when built
    DECODER_CACHE_BYTES = 256 * 2 ** 20    # what the cached decoders may hold
    block_chunk_elements = 4_000_000       # floats per chunk of blocks in block_estimates

    def __init__(self, n_inputs, n_workers, alphas=None, betas=None, points="chebyshev"):
        owner = type(self).__name__
        K = check_int(n_inputs, "n_inputs", owner, minimum=1)
        N = check_int(n_workers, "n_workers", owner, minimum=K if self._needs_n_workers_ge_n_inputs else 1,
                      constraint="an int >= n_inputs" if self._needs_n_workers_ge_n_inputs else None)
        validate(points, Options(("chebyshev", "equispaced")), "points", owner)
        self._params = {"n_inputs": K, "n_workers": N, "alphas": alphas, "betas": betas, "points": points}
        self._n_inputs, self._n_workers, self._points = K, N, points
        with entry(owner):    # code_points' messages (n_inputs, n_workers <= 10**7) name this code
            default_alphas, default_betas = code_points(K, N, points)
        self._alphas = default_alphas if alphas is None else validate(
            alphas, Knots(size=K, size_name="n_inputs", gap=_CODE_POINT_GAP, relative=False), "alphas", owner)
        self._betas = default_betas if betas is None else validate(
            betas, Knots(size=N, size_name="n_workers", gap=_CODE_POINT_GAP, relative=False), "betas", owner)
        self._alphas.flags.writeable = False
        self._betas.flags.writeable = False
        self._encoder = {}                 # form (backend.form_of) -> encoder matrix
        self._decoders = OrderedDict()     # (received, form) -> decoder matrix, least recent first
        # a decoder (or copy) holds at most K x N floats of 8 bytes (longdouble aside): this many fit
        self._decoder_cache_size = max(1, min(4096, self.DECODER_CACHE_BYTES // (8 * K * N)))

    # ------------------------------------------------------------------ parameters
    n_inputs = parameter("n_inputs")
    n_workers = parameter("n_workers")
    points = parameter("points")
    alphas = property(lambda self: self._alphas, doc="Data points, shape (K,) (read-only).")
    betas = property(lambda self: self._betas, doc="Worker points, shape (N,) (read-only).")

    def get_params(self) -> dict:
        """Constructor arguments of this code (scikit-learn style), in signature order."""
        names = list(inspect.signature(type(self).__init__).parameters)[1:]
        return {name: self._params[name] for name in names}

    def with_params(self, **changes) -> "Code":
        """A new code of the same class with some constructor arguments replaced."""
        params = self.get_params()
        unknown = sorted(set(changes) - set(params))
        if unknown:
            raise invalid(unknown[0], f"{type(self).__name__}.with_params",
                          "a constructor argument (" + ", ".join(params) + ")", changes)
        return type(self)(**{**params, **changes})

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items()
                         if not (k in ("alphas", "betas") and v is None))
        return f"{type(self).__name__}({args})"

    def __getstate__(self):
        state = self.__dict__.copy()   # caches may hold device tensors: rebuilt after unpickling
        state.update(_encoder={}, _decoders=OrderedDict())
        return state

    # ------------------------------------------------------------------ operators
    def _build_encoder(self) -> np.ndarray:  # pragma: no cover - abstract
        """Encoder matrix, shape (N, K)."""
        raise NotImplementedError

    def _build_decoder(self, received: tuple) -> np.ndarray:  # pragma: no cover - abstract
        """Decoder matrix of a validated received set, shape (K, len(received))."""
        raise NotImplementedError

    def _decode_direct(self, Y, key):
        """Estimates (K, *out) fitted without the decoder of ``key``, or None (the operator)."""
        return None

    def _received(self, received, owner):
        """The validated received set as a tuple (default: all workers)."""
        if received is None:
            return tuple(range(self._n_workers))
        return check_received(received, self._n_workers, owner)

    def _finished(self, op, which, name, owner, value):
        """A built operator as read-only float64, or the error when float64 cannot hold it."""
        if self._operators_may_overflow and not np.isfinite(op).all():
            what = "a size" if which == "encoder" else "a received set"
            raise invalid(name, owner, f"{what} whose {which} float64 can hold",
                          value if which == "encoder" else np.asarray(value), f"the {which} matrix has "
                          "entries beyond 1e308: the interpolation problem is too ill-conditioned")
        op = np.ascontiguousarray(op, dtype=np.float64)
        op.flags.writeable = False
        return op

    def _encoder_op(self, form=None):
        """The encoder as float64 numpy (``form`` None) or converted (cached)."""
        op = self._encoder.get(form)
        if op is None:
            op = self._encoder[form] = (self._finished(self._build_encoder(), "encoder", "n_inputs",
                                                       type(self).__name__, self._n_inputs)
                                        if form is None else convert(self._encoder_op(), form))
        return op

    def _decoder_op(self, received, owner, form=None):
        """The decoder of ``received`` as float64 numpy (``form`` None) or converted (cached)."""
        op = self._decoders.get((received, form))
        if op is not None:
            self._decoders.move_to_end((received, form))
            return op
        if form is None:
            op = self._finished(self._build_decoder(received), "decoder", "received", owner, received)
        else:
            op = convert(self._decoder_op(received, owner), form)
        self._decoders[(received, form)] = op
        if len(self._decoders) > self._decoder_cache_size:
            self._decoders.popitem(last=False)
        return op

    def clear_cache(self, encoder=True) -> None:
        """Drop the cached decoders (and their copies), and the encoder unless ``encoder=False``."""
        validate(encoder, BOOL, "encoder", f"{type(self).__name__}.clear_cache")
        if encoder:
            self._encoder = {}
        self._decoders.clear()

    def encoder_matrix(self) -> np.ndarray:
        """Encoder operator E, shape (N, K): ``coded = E @ X`` along axis 0 (read-only)."""
        return self._encoder_op()

    def decoder_matrix(self, received=None) -> np.ndarray:
        """Decoder operator D_F, shape (K, len(received)), of the ascending received workers (default all)."""
        name = f"{type(self).__name__}.decoder_matrix"
        return self._decoder_op(self._received(received, name), name)

    # ------------------------------------------------------------------ data path
    def encode(self, X, check_finite=True):
        """Coded inputs of the N workers: u_enc(beta_n).

        Parameters
        ----------
        X : ndarray or torch.Tensor, shape (K, *shape)
            Data points x_1..x_K stacked along axis 0 (an empty trailing axis gives an empty result).
        check_finite : bool
            Raise on NaN/inf in X (False skips the reduction in hot GPU loops).

        Returns
        -------
        ndarray or torch.Tensor, shape (N, *shape)
            Same library, floating dtype and device as X.

        Examples
        --------
        >>> import numpy as np
        >>> import gcc
        >>> code = gcc.BerrutCode(n_inputs=3, n_workers=5)
        >>> code.encode(np.ones((3, 2))).shape
        (5, 2)
        """
        X = _check_data(X, self._n_inputs, "X", "n_inputs", f"{type(self).__name__}.encode", check_finite)
        return matmul(self._encoder_op(form_of(X)), X)

    def decode(self, Y, received=None, check_finite=True):
        """Estimates of f(x_1..x_K) from the outputs of the received workers.

        Parameters
        ----------
        Y : ndarray or torch.Tensor, shape (len(received), *out)
            Outputs (real or complex) of the workers in ``received``, in that order.
        received : sequence of int or bool mask of shape (N,), optional
            Strictly ascending indices of the non-straggling workers; default all N.
        check_finite : bool
            Raise on NaN/inf in Y.

        Returns
        -------
        ndarray or torch.Tensor, shape (K, *out)
            Same library, floating dtype and device as Y: ``decoder_matrix(received) @ Y``.

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
        Y = _check_data(Y, len(key), "Y", "len(received)", owner, check_finite)
        est = self._decode_direct(Y, key)
        return matmul(self._decoder_op(key, owner, form_of(Y)), Y) if est is None else est

    def block_estimates(self, Y, stragglers):
        """``decode(Y[F_s], F_s)`` for every block ``F_s = block_received(N, S, s)`` at once, or None.

        The worst-case search (:func:`gcc.adversary.block_losses`) uses it; None for a code (or
        complex data) without a batched formula.

        Parameters
        ----------
        Y : array_like, shape (N, *out)
            Outputs of all N workers.
        stragglers : int
            S, the block length, ``0 <= S < N``.

        Returns
        -------
        ndarray of float64, shape (N - S + 1, K, *out), or None

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
        Y = to_numpy(_check_data(Y, N, "Y", "n_workers", owner))
        if Y.dtype.kind == "c":
            return None
        est = self._block_estimates(np.asarray(Y, dtype=np.float64).reshape(N, -1), S)
        return None if est is None else est.reshape((N - S + 1, self._n_inputs) + Y.shape[1:])

    def _block_estimates(self, Y, S):
        """Batched decoder of :meth:`block_estimates`: Y (N, m) float64 -> (N-S+1, K, m), or None."""
        return None
