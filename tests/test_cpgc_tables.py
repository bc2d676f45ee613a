"""The CPGC chapter's experiments (gcc.experiments.cpgc_tables): tables, convergence, decoding cost."""
import numpy as np
import pandas as pd
import pytest

from gcc import cpgc
from gcc.cpgc.closed_forms import gc_mean_time, mds_mean_time
from gcc.experiments import cpgc_tables as ct
from gcc.summary import SUMMARY_COLUMNS


def test_completion_table_rows_and_verdicts():
    table = ct.completion_time_table(tolerances=(0.0,), trials=3000, seed=0,
                                     computation=("rcsc", "mds"), communication=("gc",))
    assert list(table["scheme"]) == ["rcsc", "rcsc", "mds", "mds", "gc", "gc"]
    assert list(table["metric"]) == ["time", "messages"] * 3
    assert set(SUMMARY_COLUMNS) <= set(table.columns) and "time_ci_half" not in table.columns
    time = table[table["metric"] == "time"].set_index("scheme")
    assert time.loc["rcsc", "verdict"] == "no reference"
    assert time.loc["mds", "verdict"] == "agrees" and time.loc["gc", "verdict"] == "agrees"
    assert time.loc["mds", "reference"] == pytest.approx(mds_mean_time(40, 3))
    assert time.loc["gc", "reference"] == pytest.approx(gc_mean_time(40, 6))
    assert (table[table["metric"] == "messages"]["verdict"] == "no reference").all()
    # the same numbers as one direct call with the table's seeds
    direct = cpgc.simulate("mds", tolerance=0.0, trials=3000, seed=1000, code_seed=0)
    assert time.loc["mds", "mean"] == direct.mean_time
    wide = ct.completion_time_wide(table)
    assert list(wide["scheme"]) == ["rcsc", "mds", "gc"]
    assert wide.set_index("scheme").loc["mds", "mean_messages"] == 14.0


def test_claims_table_verdicts():
    table = ct.completion_time_table(tolerances=(0.0, 0.3), trials=400, seed=0,
                                     computation=("rcsc", "uc-mmc", "mds", "icassp-mds"),
                                     communication=("rcsc", "uc-mmc", "gc"))
    claims = ct.claims_table(table)
    assert len(claims) == 2 * len(ct.CLAIMS)
    assert set(claims["verdict"]) <= {"holds", "does not hold", "within noise"}
    row = claims[(claims["scheme"] == "gc") & (claims["tolerance"] == 0.0)].iloc[0]
    assert row["verdict"] == "holds" and row["rcsc"] < row["other"]


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
    for f in figs:
        plt.close(f)


@pytest.mark.parametrize("module", ["gcc.experiments.cpgc_tables", "gcc.cpgc.codes", "gcc.cpgc.delay",
                                    "gcc.cpgc.master", "gcc.cpgc.simulate", "gcc.cpgc.closed_forms",
                                    "gcc.cpgc.enumeration", "gcc.cpgc.regression"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
