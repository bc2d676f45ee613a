"""Tests of the experiments that can fail: two-sided verdicts, the extremal family, joint fits, adversaries.

Library-only (no notebook batch): closed forms, exhaustive loops and synthetic tables.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import gcc
from gcc.experiments import adversaries, extremal, extremal_report, noisy, probabilistic, problems, worst_case
from gcc.experiments.slopes import joint_fit, path_slopes
from gcc.experiments.verdicts import VERDICTS, verdict


# --------------------------------------------------------------------------- verdicts
@pytest.mark.parametrize("args, kwargs, expected", [
    ((-3.0, -3.2, -2.8), {}, "tight"),
    ((-3.0, -6.5, -5.5), {}, "loose"),        # decays faster than the bound
    ((-3.0, -2.5, -2.1), {}, "violated"),     # decays slower
    ((3.0, 2.0, 2.5), {}, "loose"),           # grows slower than (S+1)^3
    ((3.0, 3.4, 3.9), {}, "violated"),        # grows faster
    ((0.0, -0.6, -0.3), {}, "loose"),         # a normalised ratio that falls
    ((0.0, 0.3, 0.6), {}, "violated"),        # ... that grows
    ((-3.0, -4.6, -1.4), {}, "undecided"),    # contains the claim, far too wide
    ((-3.0, -9.0, -5.0), {}, "loose"),        # wide but decisive
    ((3.0, 2.86, 2.94), {}, "tight"),          # inside 3 +- 0.25
    ((3.0, 2.7, 2.9), {}, "undecided"),       # straddles the band's edge: not tight
    ((-1.02, -1.06, -0.22), {}, "undecided"), # contains the claim but wider than the band,
    ((3.0, 2.86, 2.94), {"delta": 0.0}, "loose"),
    ((4.0, 6.0, 6.0), {"sense": "lower", "delta": 0.0}, "loose"),     # exact beyond a sufficient threshold
    ((4.0, 2.0, 2.0), {"sense": "lower", "delta": 0.0}, "violated"),  # not exact within it
    ((1.0, 0.3, 0.6), {"sense": "equal"}, "violated"),  # an asymptotic law: either side fails
    ((1.0, 1.3, 1.4), {"sense": "equal"}, "violated"),
    ((-3.0, np.nan, np.nan), {}, "not measured"),
])
def test_verdict_every_outcome_can_occur(args, kwargs, expected):
    assert verdict(*args, **kwargs) == expected


def test_verdict_vocabulary_and_validation():
    seen = {verdict(-3.0, lo, hi) for lo, hi in ((-3.1, -2.9), (-7, -6), (-2, -1), (-5, -1), (np.nan, 0))}
    assert seen == set(VERDICTS)
    with pytest.raises(ValueError, match="The 'sense' parameter of verdict must be one of"):
        verdict(0.0, -1.0, 1.0, sense="both")


# --------------------------------------------------------------------------- joint fits
def test_joint_fit_recovers_both_exponents_and_needs_independent_cells():
    rng = np.random.default_rng(0)
    cells = pd.DataFrame({"N": [16, 32, 64, 128, 256, 64, 256, 256, 1024],
                          "S": [1, 1, 1, 1, 1, 7, 15, 31, 31]})
    cells["mean"] = 0.5 * (cells["S"] + 1) ** 2.5 * cells["N"] ** -3.2 * np.exp(rng.normal(0, 0.01, len(cells)))
    fit = joint_fit(cells.assign(scheme="gcc"), ["scheme"]).set_index("variable")
    assert fit.loc["N", "slope"] == pytest.approx(-3.2, abs=0.05)
    assert fit.loc["S+1", "slope"] == pytest.approx(2.5, abs=0.05)
    assert fit.loc["N", "ci_low"] < -3.2 < fit.loc["N", "ci_high"]
    collinear = cells.assign(S=cells["N"] // 8 - 1, scheme="gcc")
    assert joint_fit(collinear, ["scheme"])["slope"].isna().all()


def test_path_slopes_report_the_path_of_s():
    N = np.array([64, 128, 256, 512, 1024])
    S = np.round(np.sqrt(N)).astype(int)
    t = pd.DataFrame({"scheme": "gcc", "gamma": 0.5, "N": N, "S": S, "mean": ((S + 1) / N) ** 3.0})
    row = path_slopes(t, ["scheme"]).iloc[0]
    assert row["fixed"] == "gamma=0.5"
    bound = np.polyfit(np.log(N), 3.0 * np.log(S + 1.0) - 3.0 * np.log(N), 1)[0]  # the bound's slope on the path
    assert row["slope"] == pytest.approx(bound, abs=1e-9)
    assert 3.0 * row["path_s_slope"] - 3.0 == pytest.approx(bound, abs=1e-9)  # the claims table's claimed slope


# --------------------------------------------------------------------------- the extremal family
def test_bump_norms_are_exact():
    b = extremal.Bump(0.1, 0.05, height=2.0)
    t = np.linspace(0.0, 0.2, 400001)
    g = b(t)
    d2 = np.gradient(np.gradient(g, t), t)
    assert np.trapezoid(d2 ** 2, t) == pytest.approx(b.energy, rel=1e-3)
    assert np.abs(np.gradient(g, t)).max() == pytest.approx(b.sup_d1, rel=1e-3)
    assert np.abs(d2).max() == pytest.approx(b.sup_d2, rel=1e-3)
    np.testing.assert_allclose(b(np.array([0.05, 0.15, 0.3])), 0.0, atol=1e-30)  # outside the support


@pytest.mark.parametrize("name", ["gcc", "bacc", "bspline", "lcc"])
def test_line_data_make_f_o_u_enc_the_bump_itself(name):
    """Every encoder here reproduces line data on Chebyshev points, so the bump's exact norms are those of f o u_enc."""
    code = gcc.codes.make(name, 10, 64)
    extremal.check_line(code)
    t = np.linspace(-1.0, 1.0, 2001)
    u = code.with_params(n_workers=t.size, betas=t).encode(extremal.line_inputs(code))
    np.testing.assert_allclose(u, t, atol=1e-10)
    bent = SimpleNamespace(with_params=lambda n_workers, betas: SimpleNamespace(encode=lambda X: betas ** 3),
                           alphas=code.alphas)
    with pytest.raises(RuntimeError, match="does not reproduce line data"):
        extremal.check_line(bent)


def test_gap_room_and_the_hardest_data_point():
    code = gcc.SplineCode(2, 5, points="equispaced")  # betas -1, -0.5, 0, 0.5, 1; alphas -0.5, 0.5
    assert extremal.gap_room(code, 1, 0)[0] == 0.0 and extremal.gap_room(code, 1, 1) == (0.5, 3)
    assert extremal.gap_room(code, 1, 3)[0] == 0.5  # the end of Omega is a wall
    cheb = gcc.SplineCode(10, 64)
    k = extremal.hardest_data_point(cheb, 3)
    rooms = [extremal.gap_room(cheb, j, 3)[0] for j in range(10)]
    assert rooms[k] == pytest.approx(max(rooms))
    bump = extremal.bump_for(cheb, 3, 1.0)
    # The adversary's block around the hardest point leaves the bump invisible: the decoder outputs 0.
    _, loss = gcc.worst_case_stragglers(cheb, bump, extremal.line_inputs(cheb), 3, return_loss=True)
    assert loss == pytest.approx(float(np.mean(bump(cheb.alphas) ** 2)), rel=1e-9)


def test_hiding_block_hides_the_bump_from_every_received_worker():
    code = gcc.SplineCode(10, 64)
    for S in (1, 3, 8):
        k = extremal.hardest_data_point(code, S)
        received = extremal.hiding_block(code, k, S)
        assert received.size == 64 - S and np.all(np.diff(received) > 0)
        missing = np.setdiff1d(np.arange(64), received)
        assert np.all(np.diff(missing) == 1)  # one contiguous block
        bump = extremal.bump_for(code, S, 1.0, k)
        assert np.max(np.abs(bump(code.betas[received]))) == 0.0
    assert extremal.hiding_block(code, 0, 0).tolist() == list(range(64))


def test_lower_bound_family_is_the_same_closed_form_for_every_decoder_and_the_check_can_fail():
    """Issue 22: on the lower-bound family every decoder's loss is mean_k f(x_k)^2 (nothing is seen)."""
    cells = extremal.sweep_cells([32, 64], [1, 3], 64, [3, 5], n_inputs=10)
    sweep = extremal.extremal_sweep(cells, ("gcc", "bacc"))
    lb = sweep[sweep["function"] == extremal.LOWER_BOUND_FUNCTION]
    assert (lb["seen"] <= 1e-12).all() and np.allclose(lb["zero_ratio"], 1.0, rtol=1e-12)
    dec = sweep[sweep["function"] == extremal.DECODER_TEST_FUNCTION]
    assert (dec["seen"] > 0.1).all()  # the decoder test's flanks are seen
    assert set(dec["width"]) == set(extremal.FAMILIES[extremal.DECODER_TEST_FUNCTION])
    table = extremal_report.lower_bound_check(sweep)
    assert set(table["function"]) == set(extremal.FAMILIES)
    broken = sweep.copy()
    broken.loc[broken["function"] == extremal.LOWER_BOUND_FUNCTION, "seen"] = 0.5
    with pytest.raises(RuntimeError, match="not one"):
        extremal_report.lower_bound_check(broken)


def test_counting_notes_leave_out_bacc_s_rows_of_the_lower_bound_family_and_in_thm1_norm():
    rows = pd.DataFrame({"function": [extremal.LOWER_BOUND_FUNCTION] * 3 + [extremal.DECODER_TEST_FUNCTION] * 2,
                         "scheme": ["bacc", "gcc", "bacc", "bacc", "bacc"], "variable": ["S+1", "S+1", "N", "S+1", "S+1"],
                         "fixed": ["N=64", "N=64", "S=1", "N=64", "N=64"],
                         "quantity": ["normalised_sup", "normalised_sup", "normalised_sup", "normalised_sup",
                                      "normalised"],
                         "slope": [4.1, 4.05, -4.0, 4.4, 3.5], "ci_low": [4.0, 3.95, -4.1, 4.1, 3.3],
                         "ci_high": [4.2, 4.15, -3.9, 4.7, 3.7]})
    notes = extremal_report.counting_notes(rows)["not_counted"].tolist()
    assert "normalisation" in notes[0] and "4.05 [3.95, 4.15]" in notes[0]
    assert notes[1] == notes[2] == notes[3] == ""
    assert "Theorem 1's norm" in notes[4]


def test_extremal_gcc_attains_minus_three_and_plus_three():
    """The acceptance of the issue on a small grid: on the lower-bound family the normalised loss goes like
    ((S+1)/N)^3, and GCC's decoder-test exponent in N is at the bound too."""
    cells = extremal.sweep_cells([32, 64, 128, 256], [1, 3], 128, [3, 5, 8, 12, 16, 24, 31], [0.5], n_inputs=10)
    sweep = extremal.extremal_sweep(cells, ("gcc",), families={extremal.LOWER_BOUND_FUNCTION: (1.0,),
                                                               extremal.DECODER_TEST_FUNCTION: (2.0, 3.0)})
    assert set(sweep["norms"]) == {"exact"}
    summary = extremal.extremal_summary(sweep)
    slopes = extremal.extremal_slopes(summary)
    dec = slopes[(slopes["quantity"] == "normalised") & (slopes["function"] == extremal.DECODER_TEST_FUNCTION)]
    assert dec.set_index(["variable", "fixed"]).loc[("N", "S=3"), "slope"] == pytest.approx(-3.0, abs=0.4)
    slopes = slopes[slopes["function"] == extremal.LOWER_BOUND_FUNCTION]
    g = slopes[slopes["quantity"] == "normalised"].set_index(["variable", "fixed"])
    for S in (1, 3):
        assert g.loc[("N", f"S={S}"), "slope"] == pytest.approx(-3.0, abs=0.4)
    assert g.loc[("S+1", "N=128"), "slope"] == pytest.approx(3.0, abs=0.6)
    assert g.loc[("N", "joint fit"), "slope"] == pytest.approx(-3.0, abs=0.4)
    assert g.loc[("S+1", "joint fit"), "slope"] == pytest.approx(3.0, abs=0.6)
    # The sup-norm normalisation (BACC's bound) turns the same losses into ((S+1)/N)^4.
    s = slopes[slopes["quantity"] == "normalised_sup"].set_index(["variable", "fixed"])
    assert s.loc[("N", "S=3"), "slope"] == pytest.approx(-4.0, abs=0.4)


def test_sweep_cells():
    cells = extremal.sweep_cells([16, 64], [0, 10], 64, [0, 60], [0.5], n_inputs=10)
    assert set(cells["sweep"]) == {"N", "S", "joint"}
    assert not ((cells["N"] == 16) & (cells["S"] == 10)).any()  # N - S < K
    joint = cells[cells["sweep"] == "joint"]
    assert joint["S"].tolist() == [4, 8] and (joint["gamma"] == 0.5).all()


# --------------------------------------------------------------------------- adversaries
def test_adversary_ratios_are_at_least_one_and_contiguous_is_exact_for_gcc():
    X = problems.scalar_inputs(5, seed=0)
    fns = {"x sin x": (problems.xsinx, X), "bump": adversaries.extremal_problem}
    losses = adversaries.adversary_comparison(fns, [(12, 2), (16, 3)], codes=("gcc", "bacc"))
    ratios = adversaries.adversary_ratios(losses)
    assert (ratios["exhaustive_ratio"] >= 1 - 1e-12).all() and (ratios["greedy_ratio"] >= 1 - 1e-12).all()
    assert (ratios["greedy_gap"] >= 1 - 1e-12).all()  # greedy never beats the exhaustive maximum
    table = adversaries.adversary_table(ratios).set_index(["function", "scheme"])
    assert table.loc[("x sin x", "gcc"), "exhaustive_max"] == pytest.approx(1.0)
    # BACC's worst set is not a block (the 1.96x of the issue, x sin x at N = 16, S = 3).
    assert table.loc[("x sin x", "bacc"), "exhaustive_max"] > 1.5
    one = losses[(losses["function"] == "x sin x") & (losses["scheme"] == "bacc") & (losses["N"] == 16)]
    code = gcc.BerrutCode(5, 16)
    _, best = gcc.worst_case_stragglers(code, problems.xsinx, X, 3, "exhaustive", return_loss=True)
    assert one.set_index("search").loc["exhaustive", "loss"] == pytest.approx(best)


# --------------------------------------------------------------------------- probabilistic, noisy
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_probabilistic_extremal_rows_and_both_readings():
    X = problems.scalar_inputs(6, seed=0)
    df = probabilistic.probabilistic_sweep(problems.xsinx, X, [32, 64, 128], [0.2], draws=20, seed=1, extremal=True,
                                           function="x sin x")
    ext = df[df["function"] == extremal.EXTREMAL_FUNCTION]
    assert set(ext["quantity"]) == {"normalised"} and len(ext) == len(df) / 2
    assert (ext[~ext["too_few_survivors"]]["loss"] > 0).all()
    # The same draws: the extremal rows share the typical rows' received counts and runs.
    key = ["N", "scheme", "trial"]
    typ = df[df["function"] == "x sin x"].sort_values(key)
    ext = ext.sort_values(key)
    for col in ("longest_run", "received", "too_few_survivors"):
        np.testing.assert_array_equal(ext[col].to_numpy(), typ[col].to_numpy())
    slopes = probabilistic.probabilistic_slopes(probabilistic.probabilistic_summary(df))
    assert {"ratio_log3_n3", "ratio_log4_n2", "loss", "longest_run"} <= set(slopes["quantity"])
    runs = slopes[slopes["quantity"] == "longest_run"]
    assert (runs["variable"] == "log_{1/p} N").all() and runs["scheme"].eq("").all()


def test_extremal_draw_losses_match_a_direct_decode():
    code = gcc.SplineCode(6, 40)
    received = [np.delete(np.arange(40), [18, 19, 20]), None]
    normalised, raw = probabilistic.extremal_draw_losses(code, received, widths=(1.5,))
    assert np.isnan(normalised[1])
    X = extremal.line_inputs(code)
    nodes = code.betas[received[0]]
    rooms = [min(a - nodes[nodes < a].max(), nodes[nodes > a].min() - a) for a in code.alphas]
    bump = extremal.Bump(X[int(np.argmax(rooms))], 1.5 * max(rooms))
    est = code.decode(bump(code.encode(X))[received[0]], received[0])
    assert raw[0] == pytest.approx(float(np.mean((est - bump(X)) ** 2)))
    assert normalised[0] == pytest.approx(raw[0] / bump.energy)


def test_hole_crossing_same_values_both_decoders():
    """Issue 22: both decoders on GCC's worst hole; past an end of Omega the spline is a straight line."""
    fns = {k: v for k, v in worst_case.typical_functions(10).items() if k == "x sin x"}
    holes = worst_case.hole_crossing(fns, 128, [0, 2, 30]).set_index("S")
    assert holes.loc[0, "hole_width"] == 0.0
    # Small hole: the spline is far better than Berrut on the same values.
    assert holes.loc[2, "berrut_over_spline"] > 10
    f, X = fns["x sin x"]
    code = gcc.SplineCode(10, 128)
    _, loss = gcc.worst_case_stragglers(code, f, X, 30, return_loss=True)
    assert holes.loc[30, "spline_loss"] == pytest.approx(loss)
    values = {v["key"]: v["number"] for v in worst_case.hole_values(holes.reset_index(), [30])}
    assert values["hole_xsinx_lo_spline"] == pytest.approx(loss)
    # the profile-independent names the chapters quote: the same numbers
    assert values["hole_xsinx_lo_spline"] == values["hole_xsinx_hi_spline"]
    assert values["hole_s_lo"] == 30 and values["hole_n"] == 128
    # At an end, the natural spline continues along a straight line.
    cut = np.arange(8, 128)  # workers 0..7 missing: an end hole
    vals = f(code.encode(X))
    est = code.decode(vals[cut], cut)
    t = code.betas[cut[:2]]
    line = vals[cut[0]] + (vals[cut[1]] - vals[cut[0]]) / (t[1] - t[0]) * (code.alphas - t[0])
    end = code.alphas < code.betas[cut[0]]
    assert end.any() and np.allclose(est[end], line[end], rtol=0.05, atol=1e-3)


def test_cv_choice_is_interior_and_the_check_can_fail():
    X = problems.scalar_inputs(8, seed=0)
    trials = noisy.noisy_sweeps(problems.xsinx, X, [64], [2], 64, [2], sigma=0.1, rules=("cv",), trials=2,
                                adversaries=("random",), lam_grid=noisy.lambda_grid([-6, -3, 4]), cv_trials=2)
    summary = noisy.noisy_summary(trials)
    assert noisy.check_interior(summary) == len(summary)
    assert (summary["lam_grid_low"] < summary["lam_dec"]).all() and (summary["lam_dec"] < summary["lam_grid_high"]).all()
    edge = summary.assign(lam_dec=summary["lam_grid_high"])
    with pytest.raises(RuntimeError, match="end of its grid"):
        noisy.check_interior(edge)


def test_noisy_rows_outside_theorem_range_are_flagged():
    assert noisy.in_theorem_range([0.0, 1e-9, 1e-7, 2.0], 100, 0).tolist() == [False, False, True, False]
    X = problems.scalar_inputs(8, seed=0)
    trials = noisy.noisy_sweeps(problems.xsinx, X, [32, 64, 128], [2], 64, [0, 2, 4], sigma=0.1,
                                rules=("theory", "zero"), trials=3, adversaries=("random",))
    summary = noisy.noisy_summary(trials)
    theory = summary[summary["rule"] == "theory"]
    # A clipped schedule is not the theorem's: flagged, and left out of the fits.
    assert (theory["in_theorem_range"] == ~theory["clipped"]).all()
    assert noisy.in_theorem_range(theory["lam_dec"], theory["N"], theory["S"]).all()
    assert not summary[summary["rule"] == "zero"]["in_theorem_range"].any()
    slopes = noisy.noisy_slopes(summary)
    assert slopes.groupby("rule")["in_theorem_range"].all().to_dict() == {"theory": True, "zero": False}
    fitted = slopes[(slopes["rule"] == "theory") & (slopes["variable"] == "N")]
    outside = theory[(theory["sweep"] == "N") & ~theory["in_theorem_range"]].groupby("S").size()
    for row in fitted.itertuples(index=False):
        assert row.excluded_cells == outside.get(int(row.fixed[2:]), 0)


def test_polynomial_coefficients_are_unscaled_normal_draws():
    """The docstring's promise: c_j ~ N(0, 1), not scaled by 1/j!; the leading one at least 0.5."""
    p = problems.Polynomial(6, seed=3)
    draws = np.random.default_rng(3).normal(size=7)
    np.testing.assert_array_equal(p.coef[:-1], draws[:-1])
    assert abs(p.coef[-1]) == max(abs(draws[-1]), 0.5)
    assert "j!" not in (problems.Polynomial.__doc__ or "")
