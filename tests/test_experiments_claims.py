"""The claims table (gcc.experiments.claims) and the acceptance checks of the rate notebooks (issue 4).

The acceptance tests read the saved results of the ``ci`` batch (fixture ``ci_results``,
tests/conftest.py); the verdict logic is also tested on synthetic result folders.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import gcc
from gcc.experiments import claims, worst_case

RATE_NOTEBOOKS = ("worst_case_rate", "probabilistic_rate", "noisy_rate", "polynomial_lcc", "lambda_sensitivity")


# --------------------------------------------------------------------------- verdict logic
@pytest.mark.parametrize("kind, claimed, ci, joint, expected", [
    ("decay", -3.0, (-3.5, -4.0, -2.5), None, "consistent"),
    ("decay", -3.0, (-6.0, -7.0, -5.0), None, "steeper (bound holds)"),
    ("decay", -3.0, (-2.0, -2.5, -1.5), None, "violated"),
    ("growth", 3.0, (2.0, 1.5, 2.5), None, "slower growth (bound holds)"),
    ("growth", 3.0, (3.1, 2.5, 3.5), None, "consistent"),
    ("growth", 3.0, (5.8, 5.0, 6.6), (-2.0, -0.5), "steeper in S (joint bound holds)"),
    ("growth", 3.0, (5.8, 5.0, 6.6), (-1.0, 0.5), "steeper in S (joint ratio flat: consistent)"),
    ("growth", 3.0, (5.8, 5.0, 6.6), (0.2, 1.0), "violated"),
    ("growth", 3.0, (5.8, 5.0, 6.6), None, "steeper in S (joint bound not checked)"),
    ("decay", -3.0, (np.nan, np.nan, np.nan), None, "not measured"),
])
def test_exponent_verdict(kind, claimed, ci, joint, expected):
    assert claims.exponent_verdict(kind, claimed, *ci, joint) == expected


def test_ratio_verdict():
    assert claims.ratio_verdict(-2.0, -3.0, -1.0) == "decays (bound holds)"
    assert claims.ratio_verdict(0.1, -0.5, 0.7) == "bounded (consistent)"
    assert claims.ratio_verdict(1.0, 0.5, 1.5) == "violated"


def test_claim_ids_are_unique_and_cover_the_papers_rates():
    ids = [c.id for c in claims.CLAIMS]
    assert len(ids) == len(set(ids))
    for needed in ("thm4-noiseless-N", "thm4-noiseless-S", "thm4-noisy-N", "thm2-noisy-N-3/8", "thm4-noisy-S",
                   "bacc-N", "bacc-S4", "bacc-S6", "isit-gcc", "isit-bacc", "lcc-threshold"):
        assert needed in ids


def _synthetic_root(tmp_path, gcc_slope):
    """A results root with a worst-case slopes table only."""
    folder = tmp_path / "worst_case_rate"
    folder.mkdir(parents=True)
    slopes = pd.DataFrame([
        {"function": "f", "scheme": "gcc", "straggler": "worst", "fixed": "S=2", "variable": "N",
         "slope": gcc_slope, "ci_low": gcc_slope - 0.3, "ci_high": gcc_slope + 0.3, "n_points": 6},
        {"function": "f", "scheme": "gcc", "straggler": "random", "fixed": "S=2", "variable": "N",
         "slope": 0.0, "ci_low": -0.1, "ci_high": 0.1, "n_points": 6},
    ])
    slopes.to_csv(folder / "slopes.csv", index=False)
    return tmp_path


def test_build_claims_table_on_synthetic_results(tmp_path):
    table = claims.build_claims_table(_synthetic_root(tmp_path, -2.0))
    assert list(table.columns) == claims.CLAIM_COLUMNS and "scheme" in claims.CLAIM_COLUMNS
    assert set(table["scheme"]) <= set(gcc.codes.SCHEMES)
    row = table[table["claim"] == "thm4-noiseless-N"]
    assert len(row) == 1  # the random-straggler row is not a worst-case claim
    assert row["verdict"].iloc[0] == "violated" and "S=2" in row["context"].iloc[0]
    # Claims whose notebooks did not run are listed, not dropped.
    missing = table[table["claim"] == "isit-gcc"]["verdict"]
    assert missing.str.startswith("not measured").all()
    assert (table[table["claim"] == "adversarial"]["verdict"] == "not tested").all()
    good = claims.build_claims_table(_synthetic_root(tmp_path / "b", -6.0))
    assert good[good["claim"] == "thm4-noiseless-N"]["verdict"].iloc[0] == "steeper (bound holds)"


# --------------------------------------------------------------------------- acceptance (ci batch)
@pytest.fixture(scope="module")
def worst_slopes(ci_results):
    return pd.read_csv(ci_results / "worst_case_rate" / "slopes.csv")


def test_acceptance_gcc_worst_case_n_slope(worst_slopes):
    """GCC, x sin x, worst-case stragglers, fixed S <= 5: fitted N-slope <= -2.7; BACC shallower."""
    s = worst_slopes[(worst_slopes["function"] == "x sin x") & (worst_slopes["straggler"] == "worst")
                     & (worst_slopes["variable"] == "N")]
    s = s.assign(S=s["fixed"].str.removeprefix("S=").astype(int))
    s = s[s["S"] <= 5]
    gcc_slopes = s[s["scheme"] == "gcc"].set_index("S")["slope"]
    bacc_slopes = s[s["scheme"] == "bacc"].set_index("S")["slope"]
    assert len(gcc_slopes) >= 3 and set(gcc_slopes.index) == set(bacc_slopes.index)
    assert (gcc_slopes <= -2.7).all(), gcc_slopes.to_dict()
    assert (bacc_slopes > gcc_slopes).all(), (bacc_slopes.to_dict(), gcc_slopes.to_dict())


def test_acceptance_worst_case_slopes_recomputed_from_saved_summary(ci_results, worst_slopes):
    """The saved slopes are what the saved summary gives (tables are consistent)."""
    summary = pd.read_csv(ci_results / "worst_case_rate" / "summary.csv")
    params = json.loads((ci_results / "worst_case_rate" / "provenance.json").read_text())["parameters"]
    again = worst_case.worst_case_slopes(summary, fit_min_ratio=params["fit_min_ratio"])
    merged = again.merge(worst_slopes, on=["function", "scheme", "straggler", "fixed", "variable"])
    assert len(merged) == len(worst_slopes)
    np.testing.assert_allclose(merged["slope_x"], merged["slope_y"], rtol=1e-9, equal_nan=True)


def test_acceptance_probabilistic_ratio_does_not_grow(ci_results):
    """max(normalised ratio over the upper half of the N grid) <= 2 x ratio at the grid's middle."""
    summary = pd.read_csv(ci_results / "probabilistic_rate" / "summary.csv")
    gcc_rows = summary[summary["scheme"] == "gcc"]
    assert set(gcc_rows["p"]) == {0.1, 0.2, 0.3}
    for p, g in gcc_rows.groupby("p"):
        g = g.sort_values("N")
        # recompute the ratio from the mean loss: E[loss] N^3 / log_{1/p}(N)^3
        n = g["N"].to_numpy(float)
        ratio = g["mean"].to_numpy(float) * n ** 3 / (np.log(n) / np.log(1 / p)) ** 3
        np.testing.assert_allclose(ratio, g["ratio"], rtol=1e-9)
        mid = len(ratio) // 2
        assert ratio[mid + 1:].max() <= 2 * ratio[mid], (p, ratio)
    # Too-few-survivor draws are counted, not silently dropped.
    assert (summary["draws"] >= summary["n"]).all()
    assert ((summary["draws"] - summary["n"]) == summary["too_few"]).all()


def test_acceptance_rate_notebooks_runtime(ci_results):
    """The rate notebooks together run in under 3 minutes in the ci profile."""
    seconds = {}
    for name in RATE_NOTEBOOKS + ("claims_table",):
        run = json.loads((ci_results / name / "run.json").read_text())
        assert run["status"] in ("ok", "cached"), (name, run["status"])
        seconds[name] = float(run["seconds"])
    assert sum(seconds.values()) < 180, seconds


def test_claims_table_saved_and_complete(ci_results):
    table = pd.read_csv(ci_results / "claims_table" / "results.csv")
    assert list(table.columns) == claims.CLAIM_COLUMNS
    assert {c.id for c in claims.CLAIMS} <= set(table["claim"])
    assert not table["verdict"].str.startswith("not measured").any()
    # The rebuilt table from the saved slopes is the saved table.
    again = claims.build_claims_table(ci_results)
    text = {"context": "", "note": "", "notebook": ""}  # empty strings read back from CSV as NaN
    pd.testing.assert_frame_equal(again.reset_index(drop=True).fillna(text), table.fillna(text), check_dtype=False)
    # Theorem 1/4 in N holds for GCC at every S measured in the worst case.
    n_rows = table[table["claim"] == "thm4-noiseless-N"]
    assert len(n_rows) >= 8 and not (n_rows["verdict"] == "violated").any()
    # LCC is exact exactly up to its threshold for deg f = 3, K = 5, N = 20 (S <= 7).
    lcc = table[(table["claim"] == "lcc-threshold") & table["context"].str.startswith("deg f=3")]
    assert lcc["measured"].iloc[0] == 7 and lcc["verdict"].iloc[0] == "consistent"
    # The noisy N-rate holds under both readings of Theorem 2 for the theory schedule.
    noisy = table[table["claim"].isin(["thm4-noisy-N", "thm2-noisy-N-3/8"]) & table["context"].str.contains("theory")]
    assert len(noisy) >= 2 and not (noisy["verdict"] == "violated").any()
