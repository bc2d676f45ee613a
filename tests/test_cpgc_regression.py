"""Gradient descent with partial recovery and the decoding-cost measurements."""
import numpy as np
import pytest

from gcc import cpgc
from gcc.cpgc import regression as rg
from gcc.cpgc.decoding_cost import measure_decoding


def test_synthetic_generator_statistics():
    p = rg.synthetic_regression(n_train=4000, n_test=10, dim=50, seed=0)
    assert p.X_train.shape == (4000, 50) and p.y_test.shape == (10,)
    assert np.all((0 <= p.theta_star) & (p.theta_star <= 1))
    # Sum of N(1.5 theta/d, I) and N(-1.5 theta/d, I): mean 0, covariance 2 I.
    np.testing.assert_allclose(p.X_train.var(axis=0).mean(), 2.0, rtol=0.03)
    np.testing.assert_allclose(p.y_train, p.X_train @ p.theta_star)


def test_full_recovery_equals_plain_gradient_descent():
    p = rg.synthetic_regression(200, 50, 30, seed=1)
    errs = rg.gradient_descent(p, np.ones((1, 20, 6), dtype=bool), eta=0.1)
    theta = np.full(30, 0.1)
    ref = [np.sum((p.y_test - p.X_test @ theta) ** 2) / 50]
    for _ in range(20):
        theta = theta - 0.1 * (p.X_train.T @ (p.X_train @ theta - p.y_train)) / 200
        ref.append(np.sum((p.y_test - p.X_test @ theta) ** 2) / 50)
    np.testing.assert_allclose(errs[0], ref, rtol=1e-10)
    assert errs[0, -1] < errs[0, 0]


def test_partial_recovery_updates_only_recovered_blocks():
    p = rg.synthetic_regression(100, 20, 12, seed=2)
    masks = np.zeros((2, 1, 4), dtype=bool)
    masks[1, 0, 1] = True                                  # only coordinates 3..5 move
    errs = rg.gradient_descent(p, masks)
    assert errs[0, 1] == errs[0, 0]                        # nothing recovered: no update
    sl = rg.block_slices(12, 4)[1]
    assert (sl.start, sl.stop) == (3, 6)
    theta = np.full(12, 0.1)
    g = p.X_train.T @ (p.X_train @ theta - p.y_train) / 100
    theta[3:6] -= 0.1 * g[3:6]
    assert errs[1, 1] == pytest.approx(np.sum((p.y_test - p.X_test @ theta) ** 2) / 20, rel=1e-12)


def test_convergence_experiment_rows():
    rows = rg.convergence_experiment(schemes=("rcsc", "mds"), tolerances=(0.0, 0.3), n_runs=1, iterations=5,
                                     dim=40, n_train=80, n_test=20, n_workers=8, seed=0)
    assert len(rows) == 2 * 2 * 6
    mds = [r for r in rows if r["scheme"] == "mds"]
    assert all(r["blocks_recovered"] == 8 for r in mds)
    rc = [r for r in rows if r["scheme"] == "rcsc" and r["tolerance"] == 0.3 and r["iteration"] > 0]
    assert all(r["blocks_recovered"] >= 6 for r in rc)     # ceil(8 * 0.7) = 6
    times = [r["time"] for r in rows if r["scheme"] == "rcsc" and r["tolerance"] == 0.0]
    assert times[0] == 0.0 and np.all(np.diff(times) > 0)


def test_decoding_cost_counts_and_accuracy():
    rc = measure_decoding("rcsc", n_workers=12, dim=1200, trials=3, seed=0)
    md = measure_decoding("mds", n_workers=12, dim=1200, trials=2, seed=0)
    for r in rc + md:
        assert r["max_abs_error"] < 1e-10
    # MDS: LU of k x k plus solves with d / k right-hand sides, k = 4.
    assert all(r["ops"] == round(2 * 4 ** 3 / 3 + 2 * 4 ** 2 * 300) for r in md)
    # RCSC peels: at most (m - 1) d / K subtractions per degree-m message, m <= 3.
    b = 100
    assert all(r["ops_peel"] <= r["messages"] * 2 * b for r in rc)


def test_completion_table_rows_and_verdicts():
    rows = cpgc.tables.completion_time_table(tolerances=(0.0,), trials=3000, seed=0,
                                             computation=("rcsc", "mds"), communication=("gc",))
    assert [r["scheme"] for r in rows] == ["rcsc", "mds", "gc"]
    assert rows[0]["verdict"] == "no reference"
    assert rows[1]["verdict"] == "agrees" and rows[2]["verdict"] == "agrees"
