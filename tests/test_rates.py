"""Tests of gcc.rates: the experiment runners of the theorem checks.

Library-only (no notebook batch). Numbers are checked against closed forms, an
exhaustive loop over straggler sets, and Monte Carlo of the core harness.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import gcc
from gcc import rates
from gcc.harness import simulate
from gcc.stragglers import ContiguousBlock


# --------------------------------------------------------------------------- references
def test_worst_case_reference_closed_form():
    N = np.array([10.0, 20.0, 40.0])
    np.testing.assert_allclose(rates.worst_case_reference(N, 1, const=2.0), 2.0 * (2 / N) ** 3)
    np.testing.assert_allclose(rates.worst_case_reference(100, [0, 4], power=4), [1e-8, 0.05 ** 4])


def test_log_rate_reference_and_log_base():
    # log_{1/p}(N) with p = 1/2 is log2(N).
    np.testing.assert_allclose(rates.log_base([2, 8, 1024], 0.5), [1, 3, 10])
    np.testing.assert_allclose(rates.log_rate_reference(1024, 0.5, 3, 3, const=5.0), 5 * 10 ** 3 / 1024 ** 3)
    with pytest.raises(ValueError, match="'p'"):
        rates.log_base(10, 1.0)


def test_normalised_ratio_is_constant_on_the_exact_rate():
    N = np.array([16, 64, 256, 1024])
    loss = 7.0 * rates.log_base(N, 0.2) ** 3 / N ** 3
    np.testing.assert_allclose(rates.normalised_ratio(loss, N, 0.2), 7.0)


def test_anchor_constant_bounds_every_point_and_touches_one():
    rng = np.random.default_rng(0)
    ref = rng.uniform(0.1, 1, 20)
    y = ref * rng.uniform(0.5, 3, 20)
    C = rates.anchor_constant(y, ref)
    assert np.all(y <= C * ref * (1 + 1e-12))
    assert np.isclose(np.max(y / (C * ref)), 1.0)
    assert np.isnan(rates.anchor_constant([-1.0], [1.0]))


def test_slope_table_recovers_a_power_law_and_respects_window_and_floor():
    N = np.array([16, 32, 64, 128, 256, 512], dtype=float)
    rows = [{"code": "A", "S": s, "N": n, "mean": 3.0 * (s + 1) ** 3 * n ** -2.5} for s in (0, 5) for n in N]
    rows.append({"code": "A", "S": 0, "N": 1024.0, "mean": 1e-30})  # round-off floor: dropped
    table = rates.slope_table(pd.DataFrame(rows), "N", ["code", "S"], x_min=lambda g: 8 * (g["S"] + 1),
                              y_floor=1e-26)
    np.testing.assert_allclose(table["slope"], -2.5, atol=1e-10)
    assert table["ci_high"].max() - table["ci_low"].min() < 1e-6
    assert list(table["n_points"]) == [6, 4]  # S=0: 16..512 (the floor drops 1024); S=5: N >= 48
    # fewer than 3 points: no slope, no error
    short = rates.slope_table(pd.DataFrame(rows[:2]), "N", ["code", "S"])
    assert np.isnan(short["slope"].iloc[0])


def test_slope_table_in_s_plus_one():
    S = np.array([0, 1, 3, 7, 15])
    df = pd.DataFrame({"g": "x", "S": S, "mean": 0.5 * (S + 1.0) ** 1.6})
    t = rates.slope_table(df, "S", ["g"], shift=1.0)
    assert t["variable"].iloc[0] == "S+1"
    np.testing.assert_allclose(t["slope"], 1.6, atol=1e-10)


# --------------------------------------------------------------------------- test functions
def test_tanh_network_shapes_and_errors():
    net = rates.TanhNetwork(d=4, m=3, hidden=8, seed=1)
    out = net(np.zeros((5, 4)))
    assert out.shape == (5, 3)
    np.testing.assert_allclose(net(np.ones((2, 4))), rates.TanhNetwork(4, 3, 8, seed=1)(np.ones((2, 4))))
    with pytest.raises(ValueError, match="'X' parameter of TanhNetwork"):
        net(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="'hidden' parameter of TanhNetwork"):
        rates.TanhNetwork(hidden=0)


def test_polynomial_has_exact_degree():
    p = rates.Polynomial(5, seed=3)
    x = np.linspace(-1, 1, 40)
    fit = np.polynomial.polynomial.polyfit(x, p(x), 6)
    assert abs(fit[6]) < 1e-8 and abs(fit[5]) >= 0.5 - 1e-8


def test_child_seed_is_deterministic_and_distinct():
    assert rates.child_seed(0, 64, 2) == rates.child_seed(0, 64, 2)
    assert len({rates.child_seed(0, n, s) for n in (16, 32) for s in (0, 1, 2)}) == 6


# --------------------------------------------------------------------------- worst case
def _block_losses_by_loop(code, f, X, S):
    """Reference: every contiguous block decoded one by one with code.decode."""
    true = np.asarray(f(X), dtype=float).reshape(len(X), -1)
    Y = np.asarray(f(code.encode(X)), dtype=float).reshape(code.n_workers, -1)
    out = []
    for start in range(code.n_workers - S + 1):
        received = np.concatenate([np.arange(start), np.arange(start + S, code.n_workers)])
        est = np.asarray(code.decode(Y[received], received)).reshape(true.shape)
        out.append(np.mean(np.sum((est - true) ** 2, axis=1)))
    return np.array(out)


def test_straggler_sweep_worst_case_equals_loop_over_blocks():
    X = rates.scalar_inputs(6, seed=2)
    df = rates.straggler_sweep(rates.xsinx, X, [16, 24], [0, 2, 5], codes=("GCC", "BACC"), adversary="worst")
    assert set(df.columns) >= {"function", "code", "straggler", "N", "S", "K", "trial", "loss", "block_start"}
    for _, row in df.iterrows():
        code = rates.make_code(row["code"], 6, int(row["N"]))
        ref = _block_losses_by_loop(code, rates.xsinx, X, int(row["S"]))
        assert row["loss"] == pytest.approx(ref.max(), rel=1e-6)
        if row["S"] > 0:
            assert row["block_start"] == int(np.argmax(ref))


def test_straggler_sweep_skips_cells_without_redundancy_and_caps_codes():
    X = rates.scalar_inputs(10, seed=0)
    df = rates.straggler_sweep(rates.xsinx, X, [16, 64], [0, 10], codes=("GCC", "LCC"), adversary="worst",
                               max_workers={"LCC": 16})
    assert not ((df["N"] == 16) & (df["S"] == 10)).any()  # N - S < K
    assert set(df[df["N"] == 64]["code"]) == {"GCC"}


def test_straggler_sweep_random_shares_sets_between_codes():
    X = rates.scalar_inputs(8, seed=0)
    df = rates.straggler_sweep(rates.xsinx, X, [32], [3], codes=("GCC", "BACC"), adversary="random", trials=4,
                               seed=5)
    assert len(df) == 8 and df["trial"].nunique() == 4
    with pytest.raises(ValueError, match="'adversary'"):
        rates.straggler_sweep(rates.xsinx, X, [32], [3], adversary="typo")


def test_gcc_worst_case_rate_on_a_small_grid():
    """The theorem's rate at a glance: at fixed S the worst-case loss of GCC decays at least like N^-3."""
    X = rates.scalar_inputs(10, seed=0)
    df = rates.straggler_sweep(rates.xsinx, X, [64, 128, 256, 512], [2], codes=("GCC", "BACC"), adversary="worst")
    summary = rates.summarise(df.assign(sweep="N"), ["sweep", "function", "code", "straggler", "N", "S"])
    slopes = rates.worst_case_slopes(summary).set_index("code")
    assert slopes.loc["GCC", "slope"] <= -3.0
    assert slopes.loc["BACC", "slope"] > slopes.loc["GCC", "slope"]


# --------------------------------------------------------------------------- probabilistic
@pytest.mark.filterwarnings("ignore:simulate:RuntimeWarning")
def test_probabilistic_sweep_runs_match_the_harness_sets():
    X = rates.scalar_inputs(6, seed=0)
    df = rates.probabilistic_sweep(rates.xsinx, X, [12, 40], [0.3], draws=30, seed=1)
    # The re-drawn masks are the harness's: their straggler count equals N - |F| of every row.
    assert (df["longest_run"] <= df["N"] - df["n_received"]).all()
    assert ((df["n_received"] < df["N"]) | (df["longest_run"] == 0)).all()
    # Too few survivors (< K = 6) are kept, flagged and NaN, and the same draw for both codes.
    few = df[df["too_few"]]
    assert few["loss"].isna().all()
    assert (few["n_received"] < 6).all()
    summary = rates.probabilistic_summary(df)
    assert (summary["draws"] == 30).all()
    assert summary.groupby(["p", "N"])["too_few"].nunique().max() == 1


@pytest.mark.filterwarnings("ignore:simulate:RuntimeWarning")
def test_longest_run_is_the_stragglers_of_the_received_set():
    X = rates.scalar_inputs(4, seed=0)
    df = rates.probabilistic_sweep(rates.xsinx, X, [20], [0.5], draws=40, seed=3, codes=("GCC",))
    # A run of r stragglers needs at least r stragglers, and 0 stragglers means a run of 0.
    assert ((df["N"] - df["n_received"]) >= df["longest_run"]).all()
    assert (df[df["n_received"] == 20]["longest_run"] == 0).all()


def test_ratio_growth_on_synthetic_summary():
    N = np.array([16, 32, 64, 128, 256])
    s = pd.DataFrame({"function": "f", "code": "GCC", "p": 0.2, "N": N, "ratio": [5.0, 4.0, 3.0, 2.0, 6.1]})
    g = rates.ratio_growth(s).iloc[0]
    assert g["N_mid"] == 64 and g["ratio_upper_max"] == 6.1
    assert g["growth"] == pytest.approx(6.1 / 3.0)


# --------------------------------------------------------------------------- noisy
def test_curvature_energy_closed_form():
    # x_k affine in alpha_k: the natural-spline encoder is that line, u(t) = 2t + 1, and with
    # f(x) = x^2, (f o u)'' = 8, so the energy is int_{-1}^{1} 64 dt = 128.
    code = gcc.SplineCode(6, 20)
    X = 2 * np.asarray(code.alphas) + 1
    assert rates.curvature_energy(lambda x: np.asarray(x) ** 2, X, code) == pytest.approx(128, rel=1e-4)


def test_theory_lambda_schedule_exponents_and_clipping():
    lam = rates.theory_lambda_dec(np.array([1e4, 2e4]), 0, 1.0, energy=1.0, lam_max=np.inf)
    assert lam[1] / lam[0] == pytest.approx(2 ** -0.8)
    s_ratio = rates.theory_lambda_dec(1e6, 3, 1.0, lam_max=np.inf) / rates.theory_lambda_dec(1e6, 1, 1.0,
                                                                                               lam_max=np.inf)
    assert s_ratio == pytest.approx((2.0 ** -4 * (1e6 - 1) / (1e6 - 3)) ** 0.8, rel=1e-9)
    # The theorem's range: (N - S)^-4 <= lambda <= lambda_0.
    assert rates.theory_lambda_dec(100, 0, 1e-12) == pytest.approx(100.0 ** -4)
    assert rates.theory_lambda_dec(100, 0, 1e6) == 1.0


def test_exact_noise_average_matches_harness_monte_carlo():
    """bias^2 + sigma^2 ||D||_F^2 m / K against the mean of the harness's noisy trials."""
    K, N, S, sigma = 6, 30, 3, 0.2
    X = rates.scalar_inputs(K, seed=4)
    code = gcc.SplineCode(K, N, lam_dec=1e-5, points="equispaced")
    received = np.concatenate([np.arange(10), np.arange(13, N)])
    D = np.asarray(code.decoder_matrix(received))
    Y = rates.xsinx(code.encode(X)).reshape(N, 1)
    exact, bias2, var = rates._exact_noisy_loss(D, Y[received], rates.xsinx(X).reshape(K, 1), sigma)
    assert exact == pytest.approx(bias2 + var)
    mc = simulate({"GCC": code}, rates.xsinx, X, ContiguousBlock(S, start=10), trials=4000, seed=0,
                  noise_std=sigma)
    ci = gcc.metrics.mean_ci(mc["loss"].to_numpy())
    assert abs(ci.mean - exact) < 4 * ci.half_width / 1.96
    assert ci.low < exact < ci.high or abs(ci.mean - exact) / exact < 0.03


def test_noisy_sweep_rules_and_columns():
    X = rates.scalar_inputs(8, seed=0)
    df = rates.noisy_sweep(rates.xsinx, X, [32, 64], [2], sigma=0.1, rules=("theory", "zero", "cv"), trials=3,
                           lam_grid=[1e-8, 1e-6, 1e-4], cv_trials=3)
    assert set(df["rule"]) == {"theory", "zero", "cv"}
    assert (df[df["rule"] == "zero"]["lam_dec"] == 0).all()
    assert set(df[df["rule"] == "cv"]["lam_dec"]) <= {1e-8, 1e-6, 1e-4}
    np.testing.assert_allclose(df["loss"], df["bias2"] + df["variance"])
    worst = rates.noisy_sweep(rates.xsinx, X, [32], [2], sigma=0.1, rules=("theory",), adversary="worst")
    random = rates.noisy_sweep(rates.xsinx, X, [32], [2], sigma=0.1, rules=("theory",), trials=10)
    assert len(worst) == 1 and worst["loss"].iloc[0] >= random["loss"].min()
    with pytest.raises(ValueError, match="'rules'"):
        rates.noisy_sweep(rates.xsinx, X, [32], [2], rules=("typo",))


def test_smoothing_beats_interpolation_with_noise():
    X = rates.scalar_inputs(10, seed=0)
    curve = rates.noisy_lambda_curve(rates.xsinx, X, 128, 2, [0.0, 1e-9, 1e-8, 1e-7, 1e-6, 1.0], sigma=0.1,
                                     trials=5)
    mean = curve.groupby("lam_dec")[["loss", "bias2", "variance"]].mean()
    assert mean["loss"].idxmin() not in (0.0, 1.0)  # an interior optimum: the bias-variance trade-off
    assert mean["variance"].is_monotonic_decreasing and mean["bias2"].iloc[1:].is_monotonic_increasing


def test_calibrated_constant_reproduces_the_pilot_optimum():
    X = rates.scalar_inputs(10, seed=0)
    grid = np.logspace(-10, -4, 7)
    const, curve = rates.calibrate_theory_constant(rates.xsinx, X, 128, 2, grid, sigma=0.1, trials=4)
    best = curve.groupby("lam_dec")["loss"].mean().idxmin()
    energy = rates.curvature_energy(rates.xsinx, X, gcc.SplineCode(10, 128, points="equispaced"))
    lam = rates.theory_lambda_dec(128, 2, 0.1, energy=energy, const=const, lam_max=np.inf)
    assert lam == pytest.approx(best)


# --------------------------------------------------------------------------- polynomials, lambda grid
def test_polynomial_comparison_lcc_exact_iff_threshold():
    df = rates.polynomial_comparison(3, 5, 20, [0, 7, 8, 10], trials=6, seed=0)
    summary = rates.polynomial_summary(df).set_index(["code", "S"])
    exact = summary["max_loss"] <= summary["exact_tol"]
    assert exact[("LCC", 0)] and exact[("LCC", 7)]
    assert not exact[("LCC", 8)] and not exact[("LCC", 10)]
    assert not exact[("GCC", 0)]
    assert df.groupby("S")["lcc_exact"].first().to_dict() == {0: True, 7: True, 8: False, 10: False}


def test_lambda_sensitivity_grid_and_optimum():
    X = rates.scalar_inputs(10, seed=0)
    grid = [0.0, 1e-8, 1e-6, 1e-4]
    sens = rates.lambda_sensitivity(rates.xsinx, X, 40, [0, 5], grid, grid, sigma=0.1, trials=3)
    assert len(sens) == 2 * 3 * 16
    mean_table, best = rates.lambda_optimum(sens)
    assert list(best["S"]) == [0, 5]
    for _, row in best.iterrows():
        part = mean_table[mean_table["S"] == row["S"]]
        assert row["loss"] == pytest.approx(part["loss"].min())
        assert row["worst_increase_x10"] >= 0
    # lambda_enc changes only the encoder: with lam_enc = 0 and lam_dec = 0 this is the interpolating code.
    code = gcc.SplineCode(10, 40)
    z = sens[(sens["lam_enc"] == 0) & (sens["lam_dec"] == 0) & (sens["S"] == 0)]
    D = np.asarray(code.decoder_matrix(np.arange(40)))
    exact, _, _ = rates._exact_noisy_loss(D, rates.xsinx(code.encode(X)).reshape(40, 1),
                                          rates.xsinx(X).reshape(10, 1), 0.1)
    np.testing.assert_allclose(z["loss"], exact, rtol=1e-10)


def test_make_code_names():
    assert isinstance(rates.make_code("GCC", 3, 8), gcc.SplineCode)
    assert isinstance(rates.make_code("BACC", 3, 8), gcc.BerrutCode)
    assert isinstance(rates.make_code("BSpline", 3, 8), gcc.BSplineCode)
    lcc = rates.make_code("LCC", 3, 8, poly_degree=2)
    assert isinstance(lcc, gcc.LagrangeCode) and lcc.degree == 4
    with pytest.raises(ValueError, match="'name' parameter of make_code"):
        rates.make_code("RS", 3, 8)


def test_slope_view_sorts_fixed_labels_by_number():
    slopes = pd.DataFrame({"code": "GCC", "fixed": ["S=10", "S=2", "S=0"], "slope": [-3.0, -4.0, np.nan],
                           "ci_low": [-3.5, -4.5, np.nan], "ci_high": [-2.5, -3.5, np.nan]})
    view = rates.slope_view(slopes, ["fixed"])
    assert list(view.index) == ["S=0", "S=2", "S=10"]
    assert view.loc["S=2", "GCC"] == "-4.00 [-4.50, -3.50]" and view.loc["S=0", "GCC"] == "-"
