"""Metrics against hand-computed values and scipy."""
import numpy as np
import pytest
from scipy import stats

from gcc.metrics import (accuracy, loglog_slope, mean_ci, mse_loss, relacc,
                         rmse_mean_of_norms, rmse_root_mean_square)

EST = np.array([[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]])
TRUE = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
# squared errors per k: 4, 25, 1 -> norms 2, 5, 1


def test_losses_hand_values():
    assert mse_loss(EST, TRUE) == pytest.approx(30 / 3)
    assert rmse_mean_of_norms(EST, TRUE) == pytest.approx(8 / 3)
    assert rmse_root_mean_square(EST, TRUE) == pytest.approx(np.sqrt(10))
    # Jensen: mean of norms <= root mean square
    assert rmse_mean_of_norms(EST, TRUE) <= rmse_root_mean_square(EST, TRUE)
    # scalar outputs (K,) and a leading trial axis
    assert mse_loss(np.array([1.0, 3.0]), np.zeros(2)) == pytest.approx(5.0)
    stacked = np.stack([EST, TRUE, 2 * EST - TRUE])
    np.testing.assert_allclose(mse_loss(stacked, TRUE), [10.0, 0.0, 40.0])
    np.testing.assert_allclose(rmse_mean_of_norms(stacked, TRUE), [8 / 3, 0.0, 16 / 3])
    np.testing.assert_allclose(rmse_root_mean_square(stacked, TRUE), [np.sqrt(10), 0, np.sqrt(40)])


def test_losses_multi_axis_outputs_flatten():
    rng = np.random.default_rng(0)
    est, true = rng.normal(size=(4, 2, 3)), rng.normal(size=(4, 2, 3))
    flat = mse_loss(est.reshape(4, 6), true.reshape(4, 6))
    assert mse_loss(est, true) == pytest.approx(flat)
    assert mse_loss(est, true) == pytest.approx(np.sum((est - true) ** 2) / 4)


def test_torch_inputs():
    torch = pytest.importorskip("torch")
    assert mse_loss(torch.tensor(EST), torch.tensor(TRUE)) == pytest.approx(10.0)
    assert rmse_mean_of_norms(torch.tensor(EST), TRUE) == pytest.approx(8 / 3)


def test_accuracy_and_relacc_readings():
    labels = np.array([0, 1, 1, 0])
    base = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.7, 0.3]])  # 3/4 correct
    est = np.array([[0.4, 0.6], [0.2, 0.8], [0.6, 0.4], [0.7, 0.3]])   # 2/4 correct
    assert accuracy(base, labels) == 0.75 and accuracy(est, labels) == 0.5
    assert relacc(est, base, labels) == pytest.approx(0.5 / 0.75)
    np.testing.assert_allclose(relacc(np.stack([est, base]), base, labels), [2 / 3, 1.0])
    wrong = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # 0 correct
    assert np.isnan(relacc(est, wrong, labels))
    assert relacc(wrong, base, labels) == 0.0


def test_mean_ci_matches_scipy_t():
    rng = np.random.default_rng(1)
    for n in (2, 5, 20, 200):
        v = rng.normal(3.0, 2.0, size=n)
        ci = mean_ci(v, level=0.95)
        lo, hi = stats.t.interval(0.95, n - 1, loc=v.mean(), scale=stats.sem(v))
        assert (ci.low, ci.high) == pytest.approx((lo, hi), rel=1e-12)
        assert ci.mean == pytest.approx(v.mean()) and ci.n == n
    ci = mean_ci([1.0, np.nan, 3.0])
    assert ci.n == 2 and ci.mean == 2.0
    single = mean_ci([4.0])
    assert single.mean == 4.0 and np.isnan(single.half_width)


def test_loglog_slope_recovers_known_slope():
    x = np.geomspace(10, 1000, 12)
    fit = loglog_slope(x, 5.0 * x ** -3.0)
    assert fit.slope == pytest.approx(-3.0, abs=1e-12)
    assert fit.predict(100.0) == pytest.approx(5e-6)
    rng = np.random.default_rng(2)
    covered = 0
    for _ in range(200):
        y = 2.0 * x ** -2.5 * np.exp(rng.normal(0, 0.2, x.size))
        f = loglog_slope(x, y)
        covered += f.low <= -2.5 <= f.high
        ref = stats.linregress(np.log(x), np.log(y))
        assert f.slope == pytest.approx(ref.slope) and f.stderr == pytest.approx(ref.stderr)
    assert 180 <= covered <= 200  # nominal 95% coverage


@pytest.mark.parametrize("call,name", [
    (lambda: mse_loss(np.ones((3, 2)), np.ones((3, 3))), "'true'"),
    (lambda: mse_loss(np.ones(3), 1.0), "'true'"),
    (lambda: accuracy(np.ones((3, 2)), np.array([0, 1])), "'labels'"),
    (lambda: accuracy(np.ones((3, 2)), np.array([0.0, 1.0, 0.0])), "'labels'"),
    (lambda: mean_ci([1.0, 2.0], level=1.5), "'level'"),
    (lambda: mean_ci([]), "'values'"),
    (lambda: mean_ci([1.0, np.inf]), "'values'"),
    (lambda: loglog_slope([1, 2, 3], [1, -1, 2]), "'y'"),
    (lambda: loglog_slope([1, 2], [1, 2]), "'x'"),
    (lambda: loglog_slope([1, 2, 3], [1, 2]), "'y'"),
    (lambda: loglog_slope([2, 2, 2], [1, 2, 3]), "'x'"),
    # complex values where they have no meaning: rejected, never read as their real part
    (lambda: accuracy(np.ones((3, 2)) * 1j, np.array([0, 1, 0])), "'scores'"),
    (lambda: mean_ci([1.0, 2j, 3.0]), "'values'"),
    (lambda: loglog_slope([1, 2j, 3], [1, 2, 3]), "'x'"),
    (lambda: mse_loss(["a", "b"], np.zeros(2)), "'est'"),
    # labels must be class indices of the scores
    (lambda: accuracy(np.eye(3)[:, :2], np.array([0, 1, 2])), r"'labels'.*labels\[2\] = 2"),
    (lambda: accuracy(np.eye(3)[:, :2], np.array([0, -1, 1])), r"'labels'.*labels\[1\] = -1"),
])
def test_bad_inputs(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_level_is_checked_by_the_shared_validator():
    for call in (mean_ci, lambda v, level: loglog_slope([1, 2, 4], [1, 2, 4], level=level)):
        for bad in (True, 0, 1.0, float("nan"), "0.95"):
            with pytest.raises(ValueError, match=r"'level' parameter of \w+ must be a float in \(0, 1\)"):
                call([1.0, 2.0, 3.0], level=bad)
    assert mean_ci([1.0, 2.0, 3.0], level=np.float32(0.9)).n == 3


def test_torch_tensor_with_grad_is_converted():
    torch = pytest.importorskip("torch")
    est = torch.tensor(EST, requires_grad=True)
    assert mse_loss(est, TRUE) == pytest.approx(10.0)
    assert accuracy(torch.tensor([[0.9, 0.1], [0.2, 0.8]]), torch.tensor([0, 0])) == 0.5


def test_complex_errors_are_scored_by_their_modulus():
    rng = np.random.default_rng(3)
    est = rng.normal(size=(4, 3)) + 1j * rng.normal(size=(4, 3))
    true = rng.normal(size=(4, 3))
    # |e|^2 = Re(e)^2 + Im(e)^2: the loss of the real and the imaginary parts added
    assert mse_loss(est, true) == pytest.approx(mse_loss(est.real, true) + mse_loss(est.imag, 0 * true))
    assert rmse_root_mean_square(est, true) == pytest.approx(np.sqrt(mse_loss(est, true)))
    assert rmse_mean_of_norms(est, true) == pytest.approx(np.mean(np.linalg.norm(est - true, axis=1)))
    assert mse_loss(np.array([3 + 4j]), np.array([0.0])) == 25.0
    # real inputs keep their exact values
    assert mse_loss(EST, TRUE) == 10.0


def test_nan_estimates_give_nan_scores_never_a_class():
    nan_scores = np.full((3, 2), np.nan)
    assert np.isnan(accuracy(nan_scores, np.array([0, 0, 0])))
    one_nan = np.eye(3)[:, :2].copy()
    one_nan[1, 0] = np.nan
    assert np.isnan(accuracy(one_nan, np.array([0, 1, 0])))
    batched = accuracy(np.stack([np.eye(3)[:, :2], nan_scores]), np.array([0, 1, 1]))
    assert batched[0] == pytest.approx(2 / 3) and np.isnan(batched[1])
    assert np.isnan(relacc(nan_scores, np.eye(3)[:, :2], np.array([0, 1, 0])))
    assert np.isnan(mse_loss(np.array([np.nan, 0.0]), np.zeros(2)))
