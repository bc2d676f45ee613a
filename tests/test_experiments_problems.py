"""Tests of the shared experiments modules: problems, references, slopes, plotting.

Library-only (no notebook batch): closed forms and small synthetic tables.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import gcc
from gcc.experiments import plotting, problems, references, slopes
from gcc.summary import slope_table


# --------------------------------------------------------------------------- references
def test_log_base():
    # log_{1/p}(N) with p = 1/2 is log2(N).
    np.testing.assert_allclose(references.log_base([2, 8, 1024], 0.5), [1, 3, 10])
    with pytest.raises(ValueError, match="The 'p' parameter of log_base must be a float in"):
        references.log_base(10, 1.0)


def test_anchor_constant_bounds_every_point_and_touches_one():
    rng = np.random.default_rng(0)
    ref = rng.uniform(0.1, 1, 20)
    y = ref * rng.uniform(0.5, 3, 20)
    C = references.anchor_constant(y, ref)
    assert np.all(y <= C * ref * (1 + 1e-12))
    assert np.isclose(np.max(y / (C * ref)), 1.0)
    assert np.isnan(references.anchor_constant([-1.0], [1.0]))


def test_curvature_energy_closed_form():
    # x_k affine in alpha_k: the natural-spline encoder is that line, u(t) = 2t + 1, and with
    # f(x) = x^2, (f o u)'' = 8, so the energy is int_{-1}^{1} 64 dt = 128.
    code = gcc.SplineCode(6, 20)
    X = 2 * np.asarray(code.alphas) + 1
    assert references.curvature_energy(lambda x: np.asarray(x) ** 2, X, code) == pytest.approx(128, rel=1e-4)


def test_theory_lambda_schedule_exponents_and_clipping():
    lam = references.theory_lambda_dec(np.array([1e4, 2e4]), 0, 1.0, energy=1.0, clip=False)
    assert lam[1] / lam[0] == pytest.approx(2 ** -0.8)
    s_ratio = (references.theory_lambda_dec(1e6, 3, 1.0, clip=False)
               / references.theory_lambda_dec(1e6, 1, 1.0, clip=False))
    assert s_ratio == pytest.approx((2.0 ** -4 * (1e6 - 1) / (1e6 - 3)) ** 0.8, rel=1e-9)
    # The theorem's range: (N - S)^-4 <= lambda <= lambda_0.
    assert references.theory_lambda_dec(100, 0, 1e-12) == pytest.approx(100.0 ** -4)
    assert references.theory_lambda_dec(100, 0, 1e6) == 1.0


# --------------------------------------------------------------------------- test problems
def test_tanh_network_shapes_and_errors():
    net = problems.TanhNetwork(d=4, m=3, hidden=8, seed=1)
    assert net(np.zeros((5, 4))).shape == (5, 3)
    np.testing.assert_allclose(net(np.ones((2, 4))), problems.TanhNetwork(4, 3, 8, seed=1)(np.ones((2, 4))))
    with pytest.raises(ValueError, match=r"The 'X' parameter of TanhNetwork must be an array of shape \(n, 4\)"):
        net(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="The 'hidden' parameter of TanhNetwork must be an int >= 1. Got 0"):
        problems.TanhNetwork(hidden=0)


def test_polynomial_has_exact_degree_and_validates_it():
    p = problems.Polynomial(5, seed=3)
    x = np.linspace(-1, 1, 40)
    fit = np.polynomial.polynomial.polyfit(x, p(x), 6)
    assert abs(fit[6]) < 1e-8 and abs(fit[5]) >= 0.5 - 1e-8
    with pytest.raises(ValueError, match="The 'degree' parameter of Polynomial must be an int >= 1"):
        problems.Polynomial(0)


def test_child_seed_is_deterministic_and_distinct():
    assert problems.child_seed(0, 64, 2) == problems.child_seed(0, 64, 2)
    assert len({problems.child_seed(0, n, s) for n in (16, 32) for s in (0, 1, 2)}) == 6


def test_inputs_are_seeded():
    np.testing.assert_array_equal(problems.scalar_inputs(5, seed=1), problems.scalar_inputs(5, seed=1))
    assert problems.as_matrix(np.zeros((4, 2, 3))).shape == (4, 6)


def test_exact_noise_average_matches_harness_monte_carlo():
    """bias^2 + sigma^2 ||D||_F^2 m / K against the mean of the harness's noisy trials."""
    from gcc.harness import run_trials

    K, N, S, sigma = 6, 30, 3, 0.2
    X = problems.scalar_inputs(K, seed=4)
    code = gcc.SplineCode(K, N, lam_dec=1e-5, points="equispaced")
    received = np.concatenate([np.arange(10), np.arange(13, N)])
    D = np.asarray(code.decoder_matrix(received))
    Y = problems.xsinx(code.encode(X)).reshape(N, 1)
    exact, bias2, var = problems.exact_noisy_loss(D, Y[received], problems.xsinx(X).reshape(K, 1), sigma)
    assert exact == pytest.approx(bias2 + var)
    mc = run_trials({"gcc": code}, problems.xsinx, X, gcc.ContiguousBlock(S, start=10), trials=4000, seed=0,
                    noise_std=sigma)
    ci = gcc.metrics.mean_ci(mc["loss"].to_numpy())
    assert abs(ci.mean - exact) < 4 * ci.half_width / 1.96
    assert ci.low < exact < ci.high or abs(ci.mean - exact) / exact < 0.03


# --------------------------------------------------------------------------- slopes tables, plotting
def test_as_rate_slopes_orders_and_completes_columns():
    table = slopes.as_rate_slopes(pd.DataFrame({"slope": [1.0], "extra": [2], "scheme": ["gcc"]}))
    assert list(table.columns) == slopes.RATE_SLOPE_COLUMNS + ["extra"]
    assert table["rule"].iloc[0] == ""


def test_slope_view_sorts_fixed_labels_by_number():
    s = pd.DataFrame({"scheme": "gcc", "fixed": ["S=10", "S=2", "S=0"], "slope": [-3.0, -4.0, np.nan],
                      "ci_low": [-3.5, -4.5, np.nan], "ci_high": [-2.5, -3.5, np.nan]})
    view = slopes.slope_view(s, ["fixed"])
    assert list(view.index) == ["S=0", "S=2", "S=10"]
    assert view.loc["S=2", "gcc"] == "-4.00 [-4.50, -3.50]" and view.loc["S=0", "gcc"] == "-"


def test_scheme_colors_follow_the_registry():
    assert set(gcc.codes.SCHEMES) <= set(plotting.SCHEME_STYLES)
    assert plotting.scheme_color("B-spline") == plotting.SCHEME_STYLES["bspline"][0]
    assert plotting.scheme_color("uncoded") == plotting.SCHEME_STYLES["uncoded"][0]
    assert plotting.scheme_color("lambda_dec") is None


def test_band_skips_groups_without_an_interval():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    one = pd.DataFrame({"mean": [1.0, 2.0], "ci_low": [np.nan, np.nan], "ci_high": [np.nan, np.nan]})
    plotting.band(ax, [1, 2], one, "C0")  # the summary of one measurement per group: no band
    assert len(ax.collections) == 0
    two = pd.DataFrame({"mean": [1.0, 2.0], "ci_low": [-0.5, 1.5], "ci_high": [2.0, 2.5]})
    plotting.band(ax, [1, 2], two, "C0")
    assert len(ax.collections) == 1
    ax.set_xscale("log")
    assert plotting.finish(fig) is fig
    plt.close(fig)


# --------------------------------------------------------------------------- the fits the rate slopes rely on
def test_slope_table_recovers_a_power_law_and_respects_window_and_floor():
    """gcc.summary.slope_table as the rate experiments call it: a window callable and a round-off floor."""
    N = np.array([16, 32, 64, 128, 256, 512], dtype=float)
    rows = [{"scheme": "gcc", "S": s, "N": n, "mean": 3.0 * (s + 1) ** 3 * n ** -2.5} for s in (0, 5) for n in N]
    rows.append({"scheme": "gcc", "S": 0, "N": 1024.0, "mean": 1e-30})  # round-off floor: dropped
    table = slope_table(pd.DataFrame(rows), "N", ["scheme", "S"], x_min=lambda g: 8 * (g["S"] + 1), y_floor=1e-26)
    np.testing.assert_allclose(table["slope"], -2.5, atol=1e-10)
    assert table["ci_high"].max() - table["ci_low"].min() < 1e-6
    assert list(table["n_points"]) == [6, 4]  # S=0: 16..512 (the floor drops 1024); S=5: N >= 48
    # fewer than 3 points: no slope, no error
    short = slope_table(pd.DataFrame(rows[:2]), "N", ["scheme", "S"])
    assert np.isnan(short["slope"].iloc[0])


def test_slope_table_in_s_plus_one():
    S = np.array([0, 1, 3, 7, 15])
    df = pd.DataFrame({"g": "x", "S": S, "mean": 0.5 * (S + 1.0) ** 1.6})
    t = slope_table(df, "S", ["g"], shift=1.0)
    assert t["variable"].iloc[0] == "S+1"
    np.testing.assert_allclose(t["slope"], 1.6, atol=1e-10)
