"""Malformed inputs: each raises ValueError naming the argument and showing the bad value."""
import re

import numpy as np
import pytest

import gcc
from gcc import validation as v

nan, inf = float("nan"), float("inf")


def _code(cls=gcc.SplineCode, K=4, N=10, **kw):
    return cls(K, N, **kw)


def _torch_with_inf():
    torch = pytest.importorskip("torch")
    X = torch.zeros(4, 3)
    X[1, 2] = inf
    return X


# (id, callable, argument name, text that must appear in the message)
CASES = [
    ("n_inputs zero", lambda: gcc.SplineCode(0, 5), "n_inputs", "Got 0 instead"),
    ("n_inputs float", lambda: gcc.SplineCode(3.0, 5), "n_inputs", "Got 3.0 instead"),
    ("n_inputs bool", lambda: gcc.BerrutCode(True, 5), "n_inputs", "Got True instead"),
    ("n_workers str", lambda: gcc.SplineCode(5, "10"), "n_workers", "Got '10' instead"),
    ("K > N for LCC", lambda: gcc.LagrangeCode(5, 3), "n_workers", ">= n_inputs. Got 3 instead"),
    ("n_workers zero", lambda: gcc.BSplineCode(2, 0), "n_workers", "Got 0 instead"),
    ("negative lam_enc", lambda: gcc.SplineCode(4, 10, lam_enc=-1e-3), "lam_enc", "-0.001"),
    ("nan lam_dec", lambda: gcc.SplineCode(4, 10, lam_dec=nan), "lam_dec", "nan"),
    ("string lam_dec", lambda: gcc.SplineCode(4, 10, lam_dec="gcv"), "lam_dec", "'gcv'"),
    ("unknown points", lambda: gcc.SplineCode(4, 10, points="random"), "points", "'random'"),
    ("alphas not ascending", lambda: _code(alphas=[-0.5, 0.2, 0.1, 0.6]), "alphas",
     "alphas[2] = 0.1 is not greater than alphas[1] = 0.2"),
    ("alphas outside [-1,1]", lambda: _code(alphas=[-0.5, 0.2, 0.3, 1.5]), "alphas", "alphas[3] = 1.5"),
    ("alphas inf", lambda: _code(alphas=[-0.5, 0.2, 0.3, inf]), "alphas", "inf"),
    ("alphas wrong length", lambda: _code(alphas=[-0.5, 0.5]), "alphas", "it has length 2"),
    ("betas duplicated", lambda: _code(K=2, N=4, betas=[-1, 0, 0, 1]), "betas", "betas[2] = 0.0 is duplicated"),
    ("betas 2-D", lambda: _code(K=2, N=4, betas=np.zeros((2, 2))), "betas", "shape (2, 2)"),
    ("X wrong leading dim", lambda: _code().encode(np.ones((3, 2))), "X", "its shape is (3, 2)"),
    ("X scalar", lambda: _code().encode(1.0), "X", "its shape is ()"),
    ("X nan", lambda: _code().encode(np.array([[0.0], [1.0], [nan], [2.0]])), "X", "X[2, 0] = nan"),
    ("X torch inf", lambda: _code().encode(_torch_with_inf()), "X", "X[1, 2] = inf"),
    ("X strings", lambda: _code().encode(np.array(["a", "b", "c", "d"])), "X", "'a'"),
    ("Y rows != len(received)", lambda: _code().decode(np.ones((3, 2)), [0, 4, 6, 8]), "Y",
     "its shape is (3, 2)"),
    ("Y nan", lambda: _code().decode(np.array([1.0, nan, 2.0]), [1, 2, 3]), "Y", "Y[1] = nan"),
    ("Y inf berrut", lambda: _code(gcc.BerrutCode).decode(np.array([1.0, -inf]), [1, 2]), "Y", "-inf"),
    ("received empty", lambda: _code().decode(np.ones((0, 2)), []), "received", "it is empty"),
    ("received unsorted", lambda: _code().decode(np.ones(2), [3, 1]), "received", "index 1 comes after 3"),
    ("received duplicated", lambda: _code().decode(np.ones(2), [2, 2]), "received", "index 2 is duplicated"),
    ("received out of range", lambda: _code().decode(np.ones(2), [2, 10]), "received",
     "index 10 is out of range for n_workers = 10"),
    ("received negative", lambda: _code().decode(np.ones(2), np.array([-1, 3])), "received", "index -1"),
    ("received float", lambda: _code().decoder_matrix([1, 2.5]), "received", "2.5 is not an int"),
    ("received 2-D", lambda: _code().decoder_matrix(np.array([[1, 2]])), "received", "[[1, 2]]"),
    ("received mask length", lambda: _code().decoder_matrix(np.ones(9, bool)), "received", "mask shape (9,)"),
    ("smoother negative lam", lambda: gcc.smoother_matrix([0, 1, 2], -1.0, [0.5]), "lam", "Got -1.0 instead"),
    ("smoother duplicated x", lambda: gcc.smoother_matrix([0, 1, 1, 2], 0.0, [0.5]), "x", "x[2] = 1.0 is duplicated"),
    ("smoother unsorted x", lambda: gcc.smoother_matrix([0, 2, 1], 0.0, [0.5]), "x",
     "x[2] = 1.0 is not greater than x[1] = 2.0"),
    ("smoother empty x", lambda: gcc.smoother_matrix([], 0.0, [0.5]), "x", "it has length 0"),
    ("smoother x_eval nan", lambda: gcc.smoother_matrix([0, 1, 2], 0.0, [0.5, nan]), "x_eval", "x_eval[1] = nan"),
    ("spline y wrong length", lambda: gcc.smoothing_spline([0, 1, 2], [1, 2], 0.1, [0.5]), "y",
     "its shape is (2,)"),
    ("spline y inf", lambda: gcc.smoothing_spline([0, 1, 2], [1, inf, 2], 0.1, [0.5]), "y", "y[1] = inf"),
    ("spline lam string", lambda: gcc.smoothing_spline([0, 1, 2], [1, 2, 3], "auto", [0.5]), "lam", "'auto'"),
    ("gcv too few points", lambda: gcc.gcv_lambda([0, 1], [1, 2]), "x", "it has length 2"),
    ("gcv negative grid", lambda: gcc.gcv_lambda([0, 1, 2, 3], [1, 2, 0, 1], grid=[1e-3, -1.0]), "grid", "-1."),
    ("chebyshev n zero", lambda: gcc.chebyshev_points(0), "n", "Got 0 instead"),
    ("chebyshev n float", lambda: gcc.chebyshev_points(2.5), "n", "Got 2.5 instead"),
    ("chebyshev kind 3", lambda: gcc.chebyshev_points(5, kind=3), "kind", "Got 3 instead"),
    ("equispaced endpoints", lambda: gcc.equispaced_points(5, endpoints="yes"), "endpoints", "'yes'"),
    ("lagrange degree", lambda: gcc.LagrangeCode(3, 6, degree=-1), "degree", "Got -1 instead"),
    ("threshold deg_f", lambda: gcc.LagrangeCode(3, 6).recovery_threshold(-2, 1), "deg_f", "Got -2 instead"),
    ("threshold stragglers", lambda: gcc.LagrangeCode(3, 6).recovery_threshold(2, 1.5), "stragglers", "1.5"),
    ("bspline bc_type", lambda: gcc.BSplineCode(3, 6, bc_type="clamped"), "bc_type", "'clamped'"),
    ("with_params unknown", lambda: gcc.SplineCode(3, 6).with_params(lam=1.0), "lam", "'lam': 1.0"),
]


@pytest.mark.parametrize("call,name,text", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_input_raises_named_value_error(call, name, text):
    with pytest.raises(ValueError) as info:
        call()
    msg = str(info.value)
    assert f"The '{name}' parameter of " in msg, msg
    assert text in msg, msg
    assert msg.rstrip().endswith("instead."), msg


def test_at_least_25_cases():
    assert len(CASES) >= 25


def test_message_format_matches_convention():
    with pytest.raises(ValueError, match=re.escape(
            "The 'n_workers' parameter of LagrangeCode must be an int >= n_inputs. Got 3 instead.")):
        gcc.LagrangeCode(5, 3)


def test_validators_return_normalised_values():
    assert v.check_int(np.int64(4), "n", "f", minimum=1) == 4 and type(v.check_int(np.int64(4), "n", "f")) is int
    assert v.check_real(np.float32(0.5), "p", "f", 0, 1, include_max=False) == 0.5
    with pytest.raises(ValueError, match=re.escape("'p' parameter of f must be a float in [0, 1). Got 1.0")):
        v.check_real(1.0, "p", "f", 0, 1, include_max=False)
    assert v.check_received(np.array([0, 3, 7]), 8, "f") == (0, 3, 7)
    assert v.check_received([0, 3, 7], 8, "f") == (0, 3, 7)
    assert v.check_received(np.array([True, False, True]), 3, "f") == (0, 2)
    pts = v.check_points([0.1, 0.2], "alphas", "f")
    assert pts.dtype == np.float64 and pts.shape == (2,)
    assert v.check_lam("gcv", "lam", "f", allow_gcv=True) == "gcv"
    X = np.ones((3, 2))
    assert v.check_finite(X, "X", "f") is X
    assert "shape (20, 30)" in v.short_repr(np.zeros((20, 30)))


def test_generator_and_seed_shorthands():
    from gcc.validation import check_rng, check_seed

    rng = np.random.default_rng(1)
    assert check_rng(rng, "rng", "f") is rng and check_seed(4, "seed", "f") == 4
    assert check_seed(rng, "seed", "f", generator=True) is rng
    with pytest.raises(ValueError, match="^The 'rng' parameter of f must be a numpy.random.Generator"):
        check_rng(None, "rng", "f")
    with pytest.raises(ValueError, match="^The 'seed' parameter of f must be an int >= 0. Got 0.5"):
        check_seed(0.5, "seed", "f")


def test_array_checks_accept_array_likes_and_name_other_objects():
    from gcc.validation import check_finite, check_leading_dim

    with pytest.raises(ValueError, match=r"^The 'X' parameter of g must be free of NaN and inf \(X\[1\] = nan\)"):
        check_finite([0.0, float("nan")], "X", "g")
    with pytest.raises(ValueError, match=r"^The 'X' parameter of g must be an array of shape \(K, ...\) "
                                         r"with K = 2 \(it is a int\)"):
        check_leading_dim(3, 2, "X", "g", "K")
