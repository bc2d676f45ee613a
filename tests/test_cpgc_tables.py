"""The CPGC chapter's experiments (gcc.experiments.cpgc_tables): tables, convergence, decoding cost."""
import numpy as np
import pandas as pd
import pytest

from gcc import cpgc
from gcc.cpgc.closed_forms import gc_mean_time, mds_mean_time
from gcc.experiments import cpgc_claims as cc
from gcc.experiments import cpgc_counting as cnt
from gcc.experiments import cpgc_published as cp
from gcc.experiments import cpgc_tables as ct
from gcc.summary import SUMMARY_COLUMNS


def test_completion_table_rows_and_verdicts():
    table = ct.completion_time_table(tolerances=(0.0, 0.3), trials=3000, seed=0,
                                     computation=("rcsc", "uc-smc", "mds"), communication=("gc",))
    assert list(table["scheme"][::2]) == ["rcsc", "rcsc", "uc-smc", "uc-smc", "mds", "mds", "gc", "gc"]
    assert list(table["metric"]) == ["time", "messages"] * 8
    assert set(SUMMARY_COLUMNS) <= set(table.columns) and "time_ci_half" not in table.columns
    q0 = table[table["tolerance"] == 0.0].set_index(["scheme", "metric"])
    # the published number where the draft prints one, the closed form where it prints a dash
    assert q0.loc[("rcsc", "time"), "published"] == cp.TABLE_III["rcsc", 0.0][0]
    assert q0.loc[("rcsc", "messages"), "reference_source"] == "draft Table III"
    assert q0.loc[("mds", "time"), "closed_form"] == pytest.approx(mds_mean_time(40, 3))
    assert q0.loc[("gc", "time"), "published"] == cp.TABLE_IV["gc", 0.0][0]
    q3 = table[table["tolerance"] == 0.3].set_index(["scheme", "metric"])
    assert np.isnan(q3.loc[("mds", "time"), "published"])
    assert q3.loc[("gc", "time"), "reference"] == pytest.approx(gc_mean_time(40, 6))
    assert q3.loc[("gc", "messages"), "reference"] == 35.0 and q3.loc[("mds", "messages"), "reference"] == 14.0
    assert (q0.loc["uc-smc", "verdict"] == "not compared").all()
    assert (q0.loc["uc-smc", "reference_source"] == "not in the draft's tables").all()
    # every verdict is the rule applied to the row's own columns
    for _, row in table[table["reference"].notna()].iterrows():
        band = 0.02 if row["reference_source"].startswith("draft") else ct.CLOSED_FORM_BAND
        expect = cp.agreement_verdict(row["ci_low"] / row["reference"] - 1, row["ci_high"] / row["reference"] - 1, band)
        assert row["verdict"] == expect
    # the same numbers as one direct call with the table's seeds
    direct = cpgc.simulate("mds", tolerance=0.0, trials=3000, seed=2000, code_seed=0)
    assert q0.loc[("mds", "time"), "mean"] == direct.mean_time
    wide = ct.completion_time_wide(table)
    assert list(wide["scheme"][::2]) == ["rcsc", "uc-smc", "mds", "gc"]
    assert wide.set_index(["scheme", "tolerance"]).loc[("mds", 0.3), "mean_messages"] == 14.0


def test_published_numbers_are_the_drafts():
    pub = cp.published_table()
    assert len(pub) == 28 and set(pub["table"]) == {"III", "IV"}
    # the draft's MCC and GC entries equal their closed forms to the printed digits
    assert cp.TABLE_III["mds", 0.0][0] == pytest.approx(mds_mean_time(40, 3), abs=5e-5)
    assert cp.TABLE_IV["gc", 0.0][0] == pytest.approx(gc_mean_time(40, 6), abs=5e-4)
    assert cp.TABLE_III["mds", 0.0][1] == 14 and cp.TABLE_IV["gc", 0.0][1] == 40 - 6 + 1


def test_measured_tables_agree_with_the_draft():
    """The acceptance check at 8000 trials per cell: every published number within 3 %, none contradicted."""
    table = ct.completion_time_table(trials=8000, seed=0, computation=("rcsc", "uc-mmc", "mds"),
                                     communication=("rcsc", "uc-mmc", "gc"))
    comparison = cp.compare_with_draft(table)
    assert len(comparison) == 28
    assert comparison["gap_pct"].abs().max() <= 3.0
    assert not comparison["verdict"].isin(["above the draft", "below the draft"]).any()
    for _, row in comparison.iterrows():
        assert row["verdict"] == cp.agreement_verdict(row["gap_low_pct"] / 100, row["gap_high_pct"] / 100)
    with pytest.raises(ValueError, match="'table' parameter of compare_with_draft"):
        cp.compare_with_draft(table[table["scheme"] != "gc"])


def test_agreement_verdict_every_outcome():
    assert cp.agreement_verdict(-0.01, 0.015) == "agrees within 2%"
    assert cp.agreement_verdict(0.021, 0.03) == "above the draft"
    assert cp.agreement_verdict(-0.04, -0.025) == "below the draft"
    assert cp.agreement_verdict(0.01, 0.025) == "undecided"
    assert cp.agreement_verdict(-0.03, 0.03) == "undecided"          # wider than the band
    assert cp.agreement_verdict(np.nan, 0.0) == "not measured"
    assert cp.agreement_verdict(0.008, 0.009, band=0.01) == "agrees within 1%"


def _draft_wide(scale_half=1e-6, override=None):
    """A wide table holding the draft's own numbers (tiny intervals), with optional replacements."""
    rows = []
    for setting, table in (("computation", cp.TABLE_III), ("communication", cp.TABLE_IV)):
        for q in (0.0, 0.15, 0.3):
            for scheme in ("rcsc", "uc-mmc", "mds" if setting == "computation" else "gc"):
                t, m = table.get((scheme, q), table.get((scheme, 0.0)))
                t, m = (override or {}).get((scheme, setting, q), (t, m))
                rows.append({"scheme": scheme, "setting": setting, "tolerance": q, "mean_time": t,
                             "time_half_width": scale_half * t, "mean_messages": m,
                             "messages_half_width": scale_half * m})
    return pd.DataFrame(rows)


def test_claim_verdict_every_outcome():
    assert cc.claim_verdict(0.33, 0.36, 0.30, 0.40) == "agrees"
    assert cc.claim_verdict(0.20, 0.25, 0.30, 0.40) == "disagrees"
    assert cc.claim_verdict(0.45, 0.50, 0.30, 0.40) == "disagrees"
    assert cc.claim_verdict(0.28, 0.32, 0.30, 0.40) == "undecided"
    assert cc.claim_verdict(np.nan, 0.32, 0.30, 0.40) == "not measured"
    assert set(cc.CLAIM_VERDICTS) == {"agrees", "disagrees", "undecided", "not measured"}


def test_completion_claims_on_synthetic_tables():
    # The draft's own numbers: every reading agrees (the readings are consistent with the draft).
    claims = cc.completion_claims(_draft_wide(), early=np.full(20, 0.9))
    assert len(claims) == 21 and (claims["verdict"] == "agrees").all()
    finite = claims["draft"].notna()
    np.testing.assert_allclose(claims.loc[finite, "measured"], claims.loc[finite, "draft"], rtol=1e-9)
    assert (claims.loc[finite, "draft_verdict"] == "agrees").all()
    # RCSC slower than UC-MMC at q = 0.3, MCC as slow as UC-MMC: those readings disagree.
    bad = cc.completion_claims(_draft_wide(override={("rcsc", "computation", 0.3): (0.09, 34.51),
                                                      ("mds", "computation", 0.0): (0.2424, 14.0)}))
    by = bad.set_index("quantity")["verdict"]
    assert by["1 - E[T] RCSC / UC-MMC, q = 0.3"] == "disagrees"
    assert by["E[T] RCSC / MCC, q = 0"] == "disagrees"
    assert by["1 - E[T] at q = 0.3 / at q = 0"] == "disagrees"
    assert "share of blocks decoded before the last message, q = 0" not in by.index
    # Wide intervals decide nothing that sits near a band's edge.
    loose = cc.completion_claims(_draft_wide(scale_half=0.05))
    assert loose.set_index("quantity").loc["E[T] RCSC / MCC, q = 0", "verdict"] == "undecided"
    # no decoding before the last message (an MDS-like master) disagrees with the claim
    none = cc.completion_claims(_draft_wide(), early=np.zeros(20)).iloc[13]
    assert none["verdict"] == "disagrees"


def test_early_decoding_separates_rcsc_from_mds():
    rcsc = cc.early_decoding("rcsc", trials=20, n_workers=12, seed=1)
    mds = cc.early_decoding("mds", trials=20, n_workers=12, seed=1)
    assert rcsc.min() > 0.5 and mds.max() == 0.0 and rcsc.max() < 1.0


def _synthetic_convergence(ratios, runs=6, iterations=20):
    """test_error = e0 exp(-c_q t) with c_q = ratios[q] * c_0, per run (slightly different c_0)."""
    rows = []
    for run in range(runs):
        c0 = 0.1 + 0.005 * run
        for q, r in ratios.items():
            for t in range(iterations + 1):
                rows.append({"dim": 10, "scheme": "rcsc", "tolerance": q, "run": run, "iteration": t,
                             "time": float(t), "test_error": 5.0 * np.exp(-c0 * r * t), "blocks_recovered": 4})
    return pd.DataFrame(rows)


def test_convergence_claims_every_outcome():
    ok = cc.convergence_claims(_synthetic_convergence({0.0: 1.0, 0.15: 0.95, 0.3: 0.7}))
    assert list(ok["verdict"]) == ["agrees", "agrees"]
    assert ok["measured"].tolist() == pytest.approx([0.95, 0.7])
    bad = cc.convergence_claims(_synthetic_convergence({0.0: 1.0, 0.15: 0.8, 0.3: 0.97}))
    assert list(bad["verdict"]) == ["disagrees", "disagrees"]
    edge = _synthetic_convergence({0.0: 1.0, 0.15: 0.9, 0.3: 0.9})
    edge.loc[(edge.tolerance == 0.15) & (edge.run == 0), "test_error"] *= np.exp(-0.2 * edge["iteration"])
    assert cc.convergence_claims(edge)["verdict"].iloc[0] == "undecided"


def _independent_counts(rows_of_worker, need):
    """Per type, score vectors after which >= need blocks have e_k in the row span (least squares)."""
    import itertools
    from collections import Counter

    counts = Counter()
    for scores in itertools.product(range(3), repeat=4):
        rows = [r for i, s in enumerate(scores) for r in rows_of_worker[i][:s]]
        n = 0
        if rows:
            A = np.array(rows, dtype=float).T                 # columns span the received rows
            for k in range(4):
                e = np.eye(4)[k]
                x = np.linalg.lstsq(A, e, rcond=None)[0]
                n += bool(np.linalg.norm(A @ x - e) < 1e-9)
        c = Counter(scores)
        counts[(c[2], c[1], c[0])] += n >= need
    return counts


def test_table_ii_against_an_independent_enumeration():
    e = np.eye(4, dtype=int)
    # the draft's example, written out: W1..W4, then W3+W4, W1+W3, W2+W4, W1+W2
    ccpr = [[e[0], e[2] + e[3]], [e[1], e[0] + e[2]], [e[2], e[1] + e[3]], [e[3], e[0] + e[1]]]
    ucmmc = [[e[i], e[(i + 1) % 4]] for i in range(4)]
    table = cnt.recovery_table(blocks=3).set_index(["N2", "N1", "N0"])
    for name, rows in (("ccpr", ccpr), ("uc-mmc", ucmmc)):
        three, full = _independent_counts(rows, 3), _independent_counts(rows, 4)
        for key, row in table.iterrows():
            assert row[name] == three[key] and row[f"full_{name}"] == full[key]
    assert table["same"].all()                              # the draft's statement about Table II
    assert (table["vectors"].sum(), len(table)) == (81, 15)
    # Table I beside the draft's counts (the published numbers of cpgc_published)
    for key, (_, ref_ucmmc, ref_ccpr) in cp.TABLE_I.items():
        assert table.loc[key, "full_uc-mmc"] == ref_ucmmc and table.loc[key, "full_ccpr"] == ref_ccpr


def test_code_variability_uses_the_same_delays():
    var = ct.code_variability_table(n_codes=2, tolerances=(0.0,), trials=200, seed=0)
    assert list(var["code_draw"]) == [0, 0, 1, 1] and (var["scheme"] == "rcsc").all()
    assert var["shifts"].iloc[0] != var["shifts"].iloc[2]
    again = cpgc.simulate("rcsc", trials=200, seed=0, code_seed=10_001)
    assert var[var["metric"] == "time"]["mean"].iloc[1] == again.mean_time


def test_convergence_experiment_rows():
    rows = ct.convergence_experiment(schemes=("rcsc", "mds"), tolerances=(0.0, 0.3), n_runs=1, iterations=5,
                                     dim=40, n_train=80, n_test=20, n_workers=8, seed=0)
    assert len(rows) == 2 * 2 * 6
    assert (rows[rows["scheme"] == "mds"]["blocks_recovered"] == 8).all()
    rc = rows[(rows["scheme"] == "rcsc") & (rows["tolerance"] == 0.3) & (rows["iteration"] > 0)]
    assert (rc["blocks_recovered"] >= 6).all()     # ceil(8 * 0.7) = 6
    times = rows[(rows["scheme"] == "rcsc") & (rows["tolerance"] == 0.0)]["time"].to_numpy()
    assert times[0] == 0.0 and np.all(np.diff(times) > 0)


def test_convergence_summaries():
    parts = []
    for n, d in enumerate((12, 16)):
        part = ct.convergence_experiment(schemes=("rcsc", "mds"), tolerances=(0.0, 0.3), n_runs=2, iterations=6,
                                         dim=d, n_train=60, n_test=20, n_workers=6, seed=n)
        part["dim"] = d
        parts.append(part)
    data = pd.concat(parts, ignore_index=True)
    curves = ct.convergence_curves(data)
    err = curves[curves["metric"] == "test_error"]
    expect = data.groupby(["dim", "scheme", "tolerance", "iteration"])["test_error"].mean()
    np.testing.assert_allclose(err.set_index(["dim", "scheme", "tolerance", "iteration"])["mean"], expect)
    last = ct.convergence_summary(data)
    assert set(last["metric"]) == {"test_error", "time", "blocks_recovered"} and (last["n"] == 2).all()
    reach = ct.time_to_target(curves)
    assert len(reach) == 2 * 2 * 2
    # full gradient descent reaches its own half-way error at the half-way iteration at the latest
    mds = reach[(reach["scheme"] == "mds") & (reach["tolerance"] == 0.0)]
    assert mds["time_to_target"].notna().all()


def test_decoding_cost_counts_and_accuracy():
    rc = ct.measure_decoding("rcsc", n_workers=12, dim=1200, trials=3, seed=0)
    md = ct.measure_decoding("mds", n_workers=12, dim=1200, trials=2, seed=0)
    assert (pd.concat([rc, md])["max_abs_error"] < 1e-10).all()
    # MDS: LU of k x k plus solves with d / k right-hand sides, k = 4.
    assert (md["ops"] == round(2 * 4 ** 3 / 3 + 2 * 4 ** 2 * 300)).all()
    # RCSC peels: at most (m - 1) d / K subtractions per degree-m message, m <= 3.
    b = 100
    assert (rc["ops_peel"] <= rc["messages"] * 2 * b).all()


def test_decoding_sweep_and_summary():
    data = ct.decoding_sweep(["rcsc", "mds"], dims=[120, 240], n_workers_grid=[6, 12], fixed_dim=240,
                             fixed_workers=6, trials=2, seed=0)
    assert set(data["sweep"]) == {"d", "K"} and len(data) == 2 * 4 * 2
    summary = ct.decoding_summary(data)
    assert {"metric", "mean", "ci_low", "ci_high", "n", "median", "max"} <= set(summary.columns)
    shown = ct.decoding_display(summary)
    raw = data.groupby(["sweep", "scheme", "n_workers", "dim"])
    np.testing.assert_allclose(shown.set_index(["sweep", "scheme", "n_workers", "dim"])["ops"], raw["ops"].mean())
    np.testing.assert_allclose(shown.set_index(["sweep", "scheme", "n_workers", "dim"])["seconds"],
                               raw["decode_seconds"].median())
    assert (shown["max_abs_error"] < 1e-10).all()


def test_figures_draw():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = ct.completion_time_table(tolerances=(0.0, 0.3), trials=50, computation=("rcsc", "mds"),
                                     communication=("gc",))
    figs = [ct.plot_completion_time(table, "t")]
    data = ct.convergence_experiment(schemes=("rcsc",), tolerances=(0.0,), n_runs=1, iterations=3, dim=8,
                                     n_train=30, n_test=10, n_workers=6)
    data["dim"] = 8
    figs.append(ct.plot_convergence(ct.convergence_curves(data), 8))
    dec = ct.decoding_sweep(["rcsc"], dims=[60], n_workers_grid=[6], fixed_dim=60, fixed_workers=6, trials=1)
    figs.append(ct.plot_decoding_cost(ct.decoding_summary(dec), 6, 60))
    assert all(len(f.axes) >= 2 for f in figs)
    from gcc.figures import MIN_FONT_PT, figure_metrics

    for f in figs:  # the book's style and the registry's colours
        metrics = figure_metrics(f)
        assert metrics["min_font_pt"] >= MIN_FONT_PT and metrics["panels_per_row"] <= 3, metrics
        assert not metrics["colour_mismatches"], metrics
        plt.close(f)


@pytest.mark.parametrize("module", ["gcc.experiments.cpgc_tables", "gcc.experiments.cpgc_published",
                                    "gcc.experiments.cpgc_claims", "gcc.experiments.cpgc_counting", "gcc.cpgc.codes", "gcc.cpgc.delay",
                                    "gcc.cpgc.master", "gcc.cpgc.simulate", "gcc.cpgc.closed_forms",
                                    "gcc.cpgc.enumeration", "gcc.cpgc.regression"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
