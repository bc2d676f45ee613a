"""The book's one verdict rule (gcc.experiments.verdicts) and the claims table's use of it.

Every outcome of :func:`verdict` and :func:`band_verdict` is produced by a hand-made interval
whose place against the band is known; the claims table's verdicts are recomputed from the
table's own ``claimed``, ``ci_low``, ``ci_high``, ``sense`` and ``delta`` columns, on a synthetic
results root (fast) and on the ci batch's table (slow).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gcc.experiments import claims, dnn_claims
from gcc.experiments.verdicts import (BAND_VERDICTS, DELTA, VERDICTS, band_verdict, verdict, verdict_reason)


# --------------------------------------------------------------------------- verdict
@pytest.mark.parametrize("args, kwargs, expected", [
    # upper bound (a rate theorem), band -3 +- 0.25 = [-3.25, -2.75]
    ((-3.0, -3.2, -2.8), {}, "tight"),          # whole interval inside the band
    ((-3.0, -3.25, -2.75), {}, "tight"),        # the band's edges belong to it
    ((-3.0, -3.0, -3.0), {}, "tight"),          # a point measurement on the claim
    ((-3.0, -6.5, -5.5), {}, "loose"),          # wholly below: decays faster, the bound holds with room
    ((-3.0, -9.0, -5.0), {}, "loose"),          # wide but wholly below: still decisive
    ((-3.0, -2.6, -2.0), {}, "violated"),       # wholly above: decays slower
    ((-3.0, -3.4, -3.1), {}, "undecided"),      # straddles the lower edge
    ((-3.0, -2.9, -2.6), {}, "undecided"),      # straddles the upper edge
    ((-3.0, -3.3, -2.7), {}, "undecided"),      # contains the claim, wider than the band (0.6 > 0.5)
    ((-3.0, -4.6, -1.4), {}, "undecided"),      # far too wide
    ((-3.0, -2.8, -3.2), {}, "tight"),          # bounds in either order
    # lower bound (a sufficient condition): above the band holds with room, below fails
    ((4.0, 6.0, 6.0), {"sense": "lower", "delta": 0.0}, "loose"),
    ((4.0, 2.0, 2.0), {"sense": "lower", "delta": 0.0}, "violated"),
    ((4.0, 4.0, 4.0), {"sense": "lower", "delta": 0.0}, "tight"),
    ((4.0, 3.0, 5.0), {"sense": "lower", "delta": 0.0}, "undecided"),
    # an asymptotic law: either side is violated
    ((1.0, 0.3, 0.6), {"sense": "equal"}, "violated"),
    ((1.0, 1.3, 1.4), {"sense": "equal"}, "violated"),
    ((1.0, 0.9, 1.1), {"sense": "equal"}, "tight"),
    ((1.0, 0.6, 1.1), {"sense": "equal"}, "undecided"),
    # delta: 0 makes an exact claim, a wider band accepts more
    ((3.0, 2.86, 2.94), {"delta": 0.0}, "loose"),
    ((3.0, 2.5, 3.4), {"delta": 0.5}, "tight"),
    # nothing measured
    ((-3.0, np.nan, np.nan), {}, "not measured"),
    ((-3.0, -3.1, np.inf), {}, "not measured"),
    ((np.nan, -3.1, -2.9), {}, "not measured"),
])
def test_verdict_every_outcome(args, kwargs, expected):
    assert verdict(*args, **kwargs) == expected
    assert expected in VERDICTS


def test_verdict_has_no_margin_and_delta_is_a_quarter():
    assert DELTA == 0.25
    # An interval that contains the claim is never widened into a verdict: wider than the band is undecided.
    for half in (0.26, 0.5, 1.0, 3.0):
        assert verdict(-2.0, -2.0 - half, -2.0 + half) == "undecided"
    with pytest.raises(TypeError):
        verdict(-2.0, -2.1, -1.9, margin=0.2)
    with pytest.raises(ValueError, match="delta"):
        verdict(-2.0, -2.1, -1.9, delta=-0.1)
    with pytest.raises(ValueError, match="sense"):
        verdict(-2.0, -2.1, -1.9, sense="upward")


def test_verdict_is_band_verdict_of_the_claims_band():
    """verdict = band_verdict on [claimed - delta, claimed + delta], read by the claim's sense."""
    rng = np.random.default_rng(0)
    for _ in range(500):
        c, d = rng.normal(), abs(rng.normal()) * 0.5
        lo, hi = np.sort(c + rng.normal(size=2))
        where = band_verdict(lo, hi, c - d, c + d)
        upper, lower, equal = (verdict(c, lo, hi, sense=s, delta=d) for s in ("upper", "lower", "equal"))
        expect = {"inside": ("tight",) * 3, "undecided": ("undecided",) * 3,
                  "above": ("violated", "loose", "violated"), "below": ("loose", "violated", "violated")}[where]
        assert (upper, lower, equal) == expect


# --------------------------------------------------------------------------- band_verdict
@pytest.mark.parametrize("args, expected", [
    ((2.0, 4.0, 1.5, 6.0), "inside"),
    ((1.5, 6.0, 1.5, 6.0), "inside"),        # edges belong to the band
    ((3.0, 3.0, 1.5, 6.0), "inside"),        # a point
    ((0.1, 1.4, 1.5, 6.0), "below"),
    ((6.1, 9.0, 1.5, 6.0), "above"),
    ((-9.7, 5.6, 1.5, 6.0), "undecided"),    # RepVGG lambda_dec x10: meets the band, not inside it
    ((1.0, 2.0, 1.5, 6.0), "undecided"),     # straddles the lower edge
    ((5.0, 7.0, 1.5, 6.0), "undecided"),     # straddles the upper edge
    ((0.0, 9.0, 1.5, 6.0), "undecided"),     # covers the band
    ((4.0, 2.0, 1.5, 6.0), "inside"),        # bounds in either order
    ((np.nan, 2.0, 1.5, 6.0), "not measured"),
])
def test_band_verdict_every_outcome(args, expected):
    assert band_verdict(*args) == expected and expected in BAND_VERDICTS


def test_band_verdict_validates_the_band():
    with pytest.raises(ValueError, match="band_high"):
        band_verdict(1.0, 2.0, 6.0, 1.5)


def test_network_x10_verdict_is_the_band_rule():
    assert dnn_claims.X10_BAND == (1.5, 6.0)
    assert dnn_claims.x10_verdict(2.0, 5.0) == "consistent"
    assert dnn_claims.x10_verdict(-9.7, 5.6) == "undecided"     # touching the band is not agreement
    assert dnn_claims.x10_verdict(-1.0, 1.0) == "less sensitive than the paper"
    assert dnn_claims.x10_verdict(6.5, 8.0) == "more sensitive than the paper"


def test_network_x10_rows_are_rederived_from_their_interval(tmp_path):
    folder = tmp_path / "dnn_lambda"
    folder.mkdir()
    rows = [{"claim": "dnn-lambda-x10", "context": c, "claimed": 3.0, "measured": m, "ci_low": lo, "ci_high": hi,
             "verdict": "consistent", "counted": True} for c, m, lo, hi in
            (("a", -2.1, -9.7, 5.6), ("b", 3.0, 2.0, 4.0), ("c", 0.2, -0.5, 0.9))]
    pd.DataFrame(rows).to_csv(folder / "verdicts.csv", index=False)
    table = dnn_claims.dnn_claims_table(tmp_path)
    got = table[table["claim"] == "dnn-lambda-x10"].set_index("context")["verdict"].to_dict()
    assert got == {"a": "undecided", "b": "consistent", "c": "less sensitive than the paper"}


# --------------------------------------------------------------------------- verdict_reason
@pytest.mark.parametrize("args, kwargs, words", [
    ((-2.0, -2.9, -2.1), {}, ["[-2.9, -2.1]", "wider than the band [-2.25, -1.75]"]),
    ((3.0, 2.7, 2.9), {}, ["straddles the band's lower edge 2.75"]),
    ((3.0, 3.1, 3.4), {}, ["straddles the band's upper edge 3.25"]),
    ((-3.0, -2.4, -2.0), {}, ["wholly above the band [-3.25, -2.75]"]),
    ((-3.0, -7.0, -6.0), {}, ["wholly below"]),
    ((1.0, 3.0, 3.0), {"delta": 0.0}, ["measured 3 lies above the band [1, 1]"]),
    ((-3.0, -3.1, -2.9), {}, ["inside"]),
    ((-3.0, np.nan, np.nan), {}, ["no finite measurement"]),
])
def test_verdict_reason_says_what_the_data_show(args, kwargs, words):
    text = verdict_reason(*args, **kwargs)
    assert all(w in text for w in words), text


# --------------------------------------------------------------------------- the claims table
def _root(tmp_path):
    """A results root with slopes of every verdict, a growth row and a path row."""
    folder = tmp_path / "worst_case_rate"
    folder.mkdir(parents=True)
    base = {"scheme": "gcc", "straggler": "worst", "quantity": "loss", "n_points": 6}
    rows = []
    for i, (lo, hi) in enumerate(((-3.1, -2.9), (-7.0, -6.0), (-2.5, -2.0), (-3.6, -2.4), (-3.4, -3.0))):
        rows.append({**base, "function": f"f{i}", "fixed": "S=2", "variable": "N", "slope": (lo + hi) / 2,
                     "ci_low": lo, "ci_high": hi})
        rows.append({**base, "function": f"f{i}", "fixed": "N=64", "variable": "S+1", "slope": 6.0,
                     "ci_low": 5.8, "ci_high": 6.2})
        rows.append({**base, "function": f"f{i}", "fixed": "gamma=0.5", "variable": "N", "slope": -1.5,
                     "ci_low": lo + 1.5, "ci_high": hi + 1.5, "path_s_slope": 0.5})
    pd.DataFrame(rows).to_csv(folder / "slopes.csv", index=False)
    return tmp_path


def recomputed(table, kinds=claims.EXPONENT_KINDS):
    """Counted exponent rows of `table` with their verdict recomputed from their own columns."""
    ids = [c.id for c in claims.CLAIMS if c.kind in kinds]
    rows = table[table["claim"].isin(ids) & table["counted"].astype(bool)]
    again = [verdict(r["claimed"], r["ci_low"], r["ci_high"], sense=r["sense"], delta=r["delta"])
             for _, r in rows.iterrows()]
    return rows, again


def test_claims_table_verdicts_are_the_rule_on_their_own_columns(tmp_path):
    table = claims.build_claims_table(_root(tmp_path))
    rows, again = recomputed(table)
    assert len(rows) >= 10
    assert rows["verdict"].tolist() == again
    assert {"tight", "loose", "violated", "undecided"} <= set(again)
    assert (rows["delta"] == DELTA).all() and (rows["sense"] == "upper").all()
    # Every row says in one line what its data show.
    assert rows["reason"].str.len().gt(0).all()


def test_growth_violation_counts_only_where_the_n_exponent_is_at_or_beyond_the_bound(tmp_path):
    """S-growth 6 > 3: counted where the N exponent is tight (f0) or violated (f2); not where it is loose (f1)
    or undecided (f3, f4): there the same loss is not shown at N^-3, and (S+1)^r N^-q allows it."""
    table = claims.build_claims_table(_root(tmp_path))
    table = table[table["notebook"] == "worst_case_rate"]
    s_rows = table[table["claim"] == "thm1-S"].set_index("function")
    n_rows = table[table["claim"] == "thm1-N"].set_index("function")["verdict"]
    assert n_rows.to_dict() == {"f0": "tight", "f1": "loose", "f2": "violated", "f3": "undecided", "f4": "undecided"}
    assert (s_rows["verdict"] == "violated").all()
    assert s_rows["counted"].to_dict() == {"f0": True, "f1": False, "f2": True, "f3": False, "f4": False}
    assert "joint paths" in s_rows.loc["f1", "note"] and "loose" in s_rows.loc["f1", "note"]
    assert "not counted" in s_rows.loc["f3", "reason"]


def test_open_rows_itemise_every_violated_and_undecided_row(tmp_path):
    table = claims.build_claims_table(_root(tmp_path))
    for which in ("violated", "undecided"):
        listed = claims.open_rows(table, which)
        assert len(listed) == int((table["verdict"] == which).sum()) > 0
        assert listed["reason"].str.len().gt(0).all()
        assert listed["counted"].tolist() == sorted(listed["counted"].tolist(), reverse=True)  # counted first
    undecided = claims.open_rows(table, "undecided")
    assert undecided["reason"].str.contains("wider than the band|straddles").all()
    with pytest.raises(ValueError, match="which"):
        claims.open_rows(table, "tight")


def test_point_claims_follow_the_rule(tmp_path):
    """lambda spans, worst-set ratios and the x10 band: intervals of width 0 under the same rule."""
    folder = tmp_path / "lambda_sensitivity"
    folder.mkdir(parents=True)
    pd.DataFrame({"sigma": 0.0, "S": [0, 5, 10], "lam_enc": 0.0, "lam_dec": [0.0, 1e-8, 1e-6],
                  "opt_lam_enc": [1e-9, 1e-9, 1e-8], "opt_lam_dec": [0.0, 1e-8, 1e-6],
                  "worst_increase_x10": [0.001, 0.06, 0.3]}).to_csv(folder / "optimum.csv", index=False)
    table = claims.build_claims_table(tmp_path)
    span = table[table["claim"] == "appE-lambda-S"].set_index("context")
    assert span.loc["sigma=0, lam_enc", "measured"] == 1 and span.loc["sigma=0, lam_enc", "verdict"] == "tight"
    assert span.loc["sigma=0, lam_dec", "measured"] == 2 and span.loc["sigma=0, lam_dec", "verdict"] == "violated"
    assert "moves 2 decades" in span.loc["sigma=0, lam_dec", "reason"]
    x10 = table[table["claim"] == "appE-lambda-x10"].set_index("context")
    pct = 100 * (np.sqrt(1 + np.array([0.001, 0.06, 0.3])) - 1)     # 0.05%, 2.96%, 14.0%
    np.testing.assert_allclose(x10["measured"], pct)
    assert x10["verdict"].tolist() == ["loose", "tight", "violated"]
    assert x10["delta"].isna().all() and "1.5, 6" in x10.loc["sigma=0, S=10", "reason"]


@pytest.mark.slow
def test_ci_claims_table_verdicts_are_the_rule_on_their_own_columns(ci_results):
    table = pd.read_csv(ci_results / "claims_table" / "results.csv")
    rows, again = recomputed(table)
    assert len(rows) >= 40
    assert rows["verdict"].tolist() == again
    # Rows the rule does not reach are listed with a reason.
    for which in ("violated", "undecided"):
        assert claims.open_rows(table, which)["reason"].fillna("").str.len().gt(0).all()
