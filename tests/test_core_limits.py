"""What the arithmetic and the memory can carry (issue 15, part B): splines, codes, CPGC master.

* memory: the decoder cache holds as many decoders as fit in ``Code.DECODER_CACHE_BYTES``
  (tracemalloc, without large allocations); the LCC and B-spline decoders never form |F| x |F| arrays beyond
  ``DENSE_MAX_RECEIVED`` (and equal the dense ones, bit for bit below it);
* the smoothing parameter is computed without overflow (lam -> infinity: the least-squares line),
  near-coincident knots are the contract error naming the pair, knots of any scale give the same
  weights, complex data are smoothed by parts;
* LCC below its recovery threshold, ``block_received`` batches, the CPGC master's values;
* the docstring examples of these modules.
"""
from __future__ import annotations

import doctest
import importlib
import tracemalloc

import numpy as np
import pytest

import gcc
from gcc import cpgc
from gcc.codes import bspline, lagrange
from gcc.codes.base import block_received
from gcc.cpgc.master import IncrementalRREF


# ----------------------------------------------------------------------------- the decoder cache
def _random_sets(N, S, count, seed=0):
    rng = np.random.default_rng(seed)
    return [np.sort(rng.choice(N, N - S, replace=False)) for _ in range(count)]


@pytest.mark.parametrize("cls", [gcc.BerrutCode, gcc.LagrangeCode, gcc.BSplineCode, gcc.SplineCode])
def test_the_decoder_cache_is_bounded(cls, monkeypatch):
    K, N, S = 12, 60, 6
    monkeypatch.setattr(cls, "DECODER_CACHE_BYTES", 3 * K * N * 8 + 100)   # room for 3 decoders
    code = cls(K, N)
    Y = np.ones((N - S, 2 * K))                             # m >= K: the operator path for every code
    for F in _random_sets(N, S, 20):
        est = code.decode(Y, F)
        assert len(code._decoders) <= 3
    code.decode(Y.astype(np.float32), F)                    # a float32 copy takes a place too
    assert len(code._decoders) == 3 and np.allclose(est, code.decoder_matrix(F) @ Y)


def test_run_trials_with_a_new_received_set_per_trial_holds_a_bounded_cache():
    """The issue's case, scaled down: one new received set per trial; memory stays at the bound."""
    K, N, S = 20, 400, 10
    bound = 4 * K * N * 8
    code = gcc.BerrutCode(K, N)
    assert code._decoder_cache_size == 4096 and gcc.BerrutCode(3, 8)._decoder_cache_size == 4096
    code._decoder_cache_size = 4                            # as DECODER_CACHE_BYTES = bound would
    X = np.linspace(-1.0, 1.0, K)
    gcc.run_trials({"bacc": code}, np.sin, X, gcc.FixedCount(S), trials=3, seed=0)     # warm up
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    gcc.run_trials({"bacc": code}, np.sin, X, gcc.FixedCount(S), trials=40, seed=1)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert len(code._decoders) <= 4
    assert grown < bound + 2 * 2 ** 20, f"{grown} bytes kept after 40 trials"   # unbounded: 40 decoders


# ----------------------------------------------------------------------------- LCC and B-spline memory
def _old_lagrange(nodes, z):
    """lagrange_matrix as it was (one n x n array of node distances): the reference bits."""
    n = nodes.shape[0]
    dn = nodes[:, None] - nodes[None, :]
    np.fill_diagonal(dn, 1.0)
    logw = -np.log(np.abs(dn)).sum(axis=1)
    signw = np.where((n - 1 - np.arange(n)) % 2 == 0, 1.0, -1.0)
    dz = z[:, None] - nodes[None, :]
    hit = dz == 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        logdz = np.log(np.abs(dz))
        logl = logdz.sum(axis=1, keepdims=True)
        sgn = np.sign(dz)
        sgnl = np.prod(np.where(hit, 1.0, sgn), axis=1, keepdims=True)
        W = (sgnl * sgn * signw) * np.exp(logl - logdz + logw)
    rows = hit.any(axis=1)
    if rows.any():
        W[rows] = hit[rows].astype(np.float64)
    return W


@pytest.mark.parametrize("chunk", [1, 7, 2 ** 21])
@pytest.mark.parametrize("n", [2, 5, 40, 301])
def test_lagrange_weights_in_row_blocks_are_the_same_bits(monkeypatch, n, chunk):
    rng = np.random.default_rng(n)
    nodes, z = np.sort(rng.uniform(-1, 1, n)), np.r_[rng.uniform(-1.2, 1.2, 6), 0.0]
    z[-1] = nodes[n // 2]                                   # an evaluation point on a node
    monkeypatch.setattr(lagrange, "CHUNK_ELEMENTS", chunk)
    np.testing.assert_array_equal(lagrange.lagrange_matrix(nodes, z), _old_lagrange(nodes, z))


def test_lagrange_decoder_memory_is_linear_in_the_workers():
    n = 3000                                                # n x n float64: 69 MiB
    nodes = np.cos(np.pi * np.arange(n)[::-1] / (n - 1))
    tracemalloc.start()
    W = lagrange.lagrange_matrix(nodes, np.linspace(-0.5, 0.5, 4))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert W.shape == (4, n) and peak < 16 * 2 ** 20


def test_lagrange_least_squares_beyond_the_dense_size_is_the_same_operator(monkeypatch):
    code = gcc.LagrangeCode(5, 30, degree=6)
    F = np.r_[0:10, 14:30]
    dense = code.decoder_matrix(F).copy()
    code.clear_cache()
    monkeypatch.setattr(lagrange, "DENSE_MAX_RECEIVED", 4)
    np.testing.assert_allclose(code.decoder_matrix(F), dense, rtol=0, atol=1e-12)


@pytest.mark.parametrize("F", [np.arange(40), np.arange(3, 37), np.r_[0:10, 15:38]])
def test_bspline_banded_decoder_equals_scipy(monkeypatch, F):
    code = gcc.BSplineCode(7, 40)                           # F without the end workers: extrapolation
    dense = code.decoder_matrix(F).copy()
    code.clear_cache()
    monkeypatch.setattr(bspline, "DENSE_MAX_RECEIVED", 4)
    np.testing.assert_allclose(code.decoder_matrix(F), dense, rtol=0, atol=1e-13)


def test_bspline_decoder_memory_is_linear_in_the_workers():
    N, K = 4000, 6                                          # the dense path would hold 2 x 122 MiB
    code = gcc.BSplineCode(K, N)
    tracemalloc.start()
    D = code.decoder_matrix(np.arange(1, N))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert D.shape == (K, N - 1) and np.allclose(D.sum(axis=1), 1.0) and peak < 40 * 2 ** 20


# ----------------------------------------------------------------------------- what the arithmetic carries
@pytest.mark.parametrize("lam", [1e99, 1e150, 1e306, 1.7e308])
def test_huge_lambdas_give_the_least_squares_line(lam):
    x = np.cos(np.pi * np.arange(50) / 49)[::-1].copy()
    V = np.stack([np.ones(50), x], axis=1)
    np.testing.assert_allclose(gcc.smoother_matrix(x, lam, x), V @ np.linalg.pinv(V), atol=1e-9)
    code = gcc.SplineCode(4, 50, lam_enc=lam, lam_dec=lam)
    Y = np.sin(3 * code.betas)[:, None]
    for F in (np.arange(50), np.r_[0:20, 26:50]):
        est = code.decode(Y[F], F)
        assert np.isfinite(est).all() and np.allclose(est, code.decoder_matrix(F) @ Y[F], atol=1e-9)


def test_near_coincident_knots_are_named():
    with pytest.raises(ValueError, match=r"^The 'x' parameter of smoother_matrix .*x\[2\] = .* is near-coincident "
                                         r"with x\[1\] = 0\.5"):
        gcc.smoother_matrix([0.0, 0.5, 0.5 + 1e-14, 1.0], 0.0, 0.2)
    with pytest.raises(ValueError, match=r"'betas' parameter of SplineCode .*at least 2e-12 apart .*betas\[1\]"):
        gcc.SplineCode(2, 3, betas=[-1.0, -1.0 + 1e-13, 1.0])
    with pytest.raises(ValueError, match="'x' parameter of gcv_lambda"):
        gcc.gcv_lambda([0.0, 1e-300, 0.5, 1.0], [0.0, 1.0, 0.0, 1.0])
    gcc.SplineCode(2, 3, betas=[-1.0, -1.0 + 1e-11, 1.0])      # 1e-11 apart: fine


@pytest.mark.parametrize("scale", [2.0 ** -200, 1e-90, 1e90, 2.0 ** 300])
def test_knots_of_any_scale_give_the_same_weights(scale):
    rng = np.random.default_rng(0)
    x, t = np.sort(rng.uniform(0, 1, 12)), np.linspace(-0.2, 1.2, 5)
    y = rng.standard_normal(12)
    for lam in (0.0, 1e-4):
        ref = gcc.smoother_matrix(x, lam, t)
        np.testing.assert_allclose(gcc.smoother_matrix(x * scale, lam * scale ** 3, t * scale), ref, atol=1e-9)
        np.testing.assert_allclose(gcc.smoothing_spline(x * scale, y, lam * scale ** 3, t * scale), ref @ y, atol=1e-9)
    lam, _ = gcc.gcv_lambda(x * scale, y)
    assert lam == pytest.approx(gcc.gcv_lambda(x, y)[0] * scale ** 3, rel=1e-6)


def test_complex_data_are_smoothed_by_parts_and_complex_points_rejected():
    x = np.linspace(-1.0, 1.0, 9)
    yr, yi = np.sin(3 * x), np.cos(x)
    for lam in (0.0, 1e-3, "gcv"):
        out = gcc.smoothing_spline(x, yr + 1j * yi, lam, [0.1, 2.0])
        assert out.dtype == np.complex128
        np.testing.assert_allclose(out.real, gcc.smoothing_spline(x, yr, lam if lam != "gcv" else
                                                                  gcc.gcv_lambda(x, yr + 1j * yi)[0], [0.1, 2.0]))
    lam, scores = gcc.gcv_lambda(x, yr + 1j * yi)
    _, sr = gcc.gcv_lambda(x, yr)
    _, si = gcc.gcv_lambda(x, yi)
    np.testing.assert_allclose(scores, sr + si)             # the score is additive over columns and parts
    for f in (lambda: gcc.smoothing_spline(x, yr, 0.0, [0.5j]), lambda: gcc.smoother_matrix(x, 0.0, 0.5 + 0j)):
        with pytest.raises(ValueError, match="'x_eval' .* real scalar .*complex"):
            f()


def test_operators_float64_cannot_hold_are_errors():
    code = gcc.LagrangeCode(3, 3500, points="equispaced")   # interpolation through 3500 equispaced points
    with pytest.raises(ValueError, match="'received' parameter of LagrangeCode.decode .*float64 can hold"):
        code.decode(np.ones(3500))


# ----------------------------------------------------------------------------- codes
def test_lcc_below_its_recovery_threshold():
    code = gcc.LagrangeCode(4, 10)
    Y = code.encode(np.linspace(-1, 1, 4))
    with pytest.raises(ValueError, match=r"'received' parameter of LagrangeCode.decode must be at least "
                                         r"n_inputs = 4 .*recovery threshold.*\(it has 3\)"):
        code.decode(Y[:3], [0, 1, 2])
    with pytest.raises(ValueError, match="'received' parameter of LagrangeCode.decoder_matrix"):
        code.decoder_matrix([0, 1, 2])
    adapted = gcc.LagrangeCode(4, 10, degree=3)              # least squares: well-posed below K
    assert np.isfinite(adapted.decode(Y[:3], [0, 1, 2])).all()
    np.testing.assert_allclose(code.decode(Y[:4], [0, 1, 2, 3]), np.linspace(-1, 1, 4), atol=1e-9)


def test_block_received_takes_one_block():
    np.testing.assert_array_equal(block_received(6, 2, 1), [0, 3, 4, 5])
    for bad in ([3], np.array([2]), 1.0, 5):
        with pytest.raises(ValueError, match="^The 'start' parameter of block_received must be an int in"):
            block_received(6, 2, bad)


# ----------------------------------------------------------------------------- the CPGC master
def test_master_rejects_bad_values_before_changing_its_state():
    code = cpgc.uncoded_cyclic_code(4, 2)
    master = cpgc.Master(code)
    master.receive(0, 0, np.ones((1, 3)))
    for value, detail in ((np.ones((1, 3)) * 1j, "complex"), (np.full((1, 3), np.nan), r"value\[0, 0\] = nan"),
                          (np.ones((1, 4)), r"\(1, 3\)"), ("v", "")):
        with pytest.raises(ValueError, match=f"^The 'value' parameter of Master.receive .*{detail}"):
            master.receive(1, 0, value)
    assert master.n_messages == 1                            # nothing was taken
    master.receive(1, 0, 2 * np.ones(3))                     # (block_shape) for a one-row message
    out = master.decode()
    np.testing.assert_array_equal(out[:2], [[1, 1, 1], [2, 2, 2]])
    assert np.isnan(out[2:]).all()


def test_master_decode_needs_every_value():
    master = cpgc.Master(cpgc.uncoded_cyclic_code(4, 2))
    master.receive(0, 0)
    master.receive(1, 0, np.ones((1, 2)))
    with pytest.raises(ValueError, match=r"'value' parameter of Master.receive must be given for every message "
                                         r"before decode\(\) \(1 of the 2 messages came without one\)"):
        master.decode()


def test_a_nan_value_no_longer_spreads_and_rref_rejects_what_it_cannot_solve():
    with pytest.raises(ValueError, match="'values' parameter of rref_recoverable"):
        cpgc.rref_recoverable(np.eye(2), [[1.0], [np.nan]])
    with pytest.raises(ValueError, match="'matrix' parameter of rref_recoverable"):
        cpgc.rref_recoverable(np.eye(2) * 1j)
    with pytest.raises(ValueError, match=r"'values' parameter of rref_recoverable .*n_rows = 2"):
        cpgc.rref_recoverable(np.eye(2), np.ones((3, 1)))


def test_incremental_rref_leaves_the_callers_row_alone():
    row = np.array([2.0, 1.0, 0.0])
    rref = IncrementalRREF(3, sparse=False)
    assert rref.add(row) and row.tolist() == [2.0, 1.0, 0.0]
    with pytest.raises(ValueError, match=r"'row' parameter of IncrementalRREF.add .*\(3,\)"):
        rref.add(np.ones(4))


def test_completion_speeds_and_simulate_worker_counts():
    code = cpgc.example_code_k4()
    for speeds in (np.zeros((1, 4)), -np.ones((1, 4)), np.full((1, 4), np.inf)):
        with pytest.raises(ValueError, match="^The 'speeds' parameter of completion must be .* finite times > 0"):
            cpgc.completion(code, speeds)
    with pytest.raises(ValueError, match=r"^The 'n_workers' parameter of simulate must be an int >= the default "
                                         r"load len\(degrees\) = 3"):
        cpgc.simulate("uc-mmc", n_workers=2, trials=5)
    assert cpgc.simulate("uc-mmc", n_workers=2, trials=5, load=2).trials == 5


# ----------------------------------------------------------------------------- examples
@pytest.mark.parametrize("module", ["gcc.splines", "gcc._reinsch", "gcc.gcv", "gcc.backend", "gcc.codes.base",
                                    "gcc.codes.spline", "gcc.codes.berrut",
                                    "gcc.codes.lagrange", "gcc.codes.bspline", "gcc.codes.registry",
                                    "gcc.cpgc.master", "gcc.cpgc.simulate", "gcc.cpgc.elimination"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_gcv_beyond_the_dense_size_gives_the_same_scores(monkeypatch):
    from gcc import gcv

    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(-1, 1, 60))
    y = np.sin(3 * x) + 0.1 * rng.standard_normal(60)
    lam, scores = gcc.gcv_lambda(x, y)
    monkeypatch.setattr(gcv, "DENSE_MAX_POINTS", 10)
    lam2, scores2 = gcc.gcv_lambda(x, y)
    np.testing.assert_allclose(scores2, scores, rtol=1e-8)
    assert lam2 == lam
