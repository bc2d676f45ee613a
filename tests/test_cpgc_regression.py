"""Gradient descent with partial recovery: the data generator and the masked update."""
import numpy as np
import pytest

from gcc.cpgc import regression as rg


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
    theta = np.full(12, 0.1)
    g = p.X_train.T @ (p.X_train @ theta - p.y_train) / 100
    theta[3:6] -= 0.1 * g[3:6]
    assert errs[1, 1] == pytest.approx(np.sum((p.y_test - p.X_test @ theta) ** 2) / 20, rel=1e-12)


def test_masks_and_eta_are_validated():
    p = rg.synthetic_regression(20, 5, 4, seed=0)
    with pytest.raises(ValueError, match=r"^The 'masks' parameter of gradient_descent must be a boolean array of "
                                         r"shape \(n_sequences, iterations, n_blocks\) \(it has shape \(3, 2\)\)"):
        rg.gradient_descent(p, np.ones((3, 2), dtype=bool))
    with pytest.raises(ValueError, match="^The 'eta' parameter of gradient_descent must be a finite real number > 0"):
        rg.gradient_descent(p, np.ones((1, 2, 2), dtype=bool), eta=0)


@pytest.mark.parametrize("call,name", [
    (lambda p: rg.gradient_descent(3, np.ones((1, 2, 2), bool)), "'problem' parameter of gradient_descent"),
    (lambda p: rg.gradient_descent(p, np.full((1, 2, 2), 0.5)), r"'masks'.*0.5 is not a bool"),
    (lambda p: rg.gradient_descent(p, np.ones((1, 2, 9), bool)), r"'masks'.*n_blocks <= d = 4"),
    (lambda p: rg.synthetic_regression(20, 5, 4, seed="a"), "'seed' parameter of synthetic_regression"),
    (lambda p: rg.synthetic_regression(20, 5, 4, seed=-1), "'seed'"),
    (lambda p: rg.RegressionProblem(p.X_train, p.y_train[:3], p.X_test, p.y_test, p.theta_star), "'y_train'"),
    (lambda p: rg.RegressionProblem(p.X_train * 1j, p.y_train, p.X_test, p.y_test, p.theta_star),
     r"'X_train'.*complex"),
    (lambda p: rg.RegressionProblem(p.X_train, p.y_train, p.X_test[:, :2], p.y_test, p.theta_star), "'X_test'"),
])
def test_regression_checks_its_arguments(call, name):
    p = rg.synthetic_regression(20, 5, 4, seed=0)
    with pytest.raises(ValueError, match=name):
        call(p)
