"""The CPGC notebooks' saved results after the ci batch (fixture ``ci_results``)."""
import pandas as pd

from gcc.experiments.cpgc_tables import completion_time_wide, decoding_display
from gcc.summary import SUMMARY_COLUMNS


def test_completion_time_results(ci_results):
    folder = ci_results / "cpgc_completion_time"
    counting = pd.read_csv(folder / "counting_table_k4.csv")
    assert len(counting) == 45 and (counting.verdict == "agrees").all()
    table = pd.read_csv(folder / "completion_time.csv")
    assert set(table.scheme) == {"rcsc", "icassp-mds", "uc-mmc", "uc-smc", "mds", "gc"}
    assert set(table.tolerance) == {0.0, 0.15, 0.3} and set(table.metric) == {"time", "messages"}
    assert {"scheme", "metric", *SUMMARY_COLUMNS, "reference", "verdict"} <= set(table.columns)
    time = table[table.metric == "time"]
    assert (time[time.scheme.isin(["mds", "gc"])].verdict == "agrees").all()
    assert len(completion_time_wide(table)) == 27          # (5 + 4 schemes) x 3 tolerances
    claims = pd.read_csv(folder / "claims.csv")
    assert {"claim", "scheme", "tolerance", "verdict"} <= set(claims.columns)
    variability = pd.read_csv(folder / "code_variability.csv")
    assert {"scheme", "code_draw", "metric", "mean"} <= set(variability.columns)
    assert (folder / "exact_k4.csv").exists()
    assert (folder / "completion_time.png").exists()


def test_convergence_results(ci_results):
    folder = ci_results / "cpgc_convergence"
    data = pd.read_csv(folder / "convergence.csv")
    assert {"scheme", "tolerance", "run", "iteration", "time", "test_error", "dim"} <= set(data.columns)
    first = data[data.iteration == 0].test_error
    last = data[data.iteration == data.iteration.max()].test_error
    assert last.max() < first.min()          # every scheme and q reduces the test error
    summary = pd.read_csv(folder / "summary.csv")
    assert {"dim", "scheme", "tolerance", "metric", *SUMMARY_COLUMNS} <= set(summary.columns)
    reach = pd.read_csv(folder / "time_to_target.csv")
    assert {"dim", "scheme", "tolerance", "target", "time_to_target"} <= set(reach.columns)
    assert any(p.name.startswith("convergence_d") and p.suffix == ".png" for p in folder.iterdir())


def test_decoding_cost_results(ci_results):
    folder = ci_results / "cpgc_decoding_cost"
    assert (pd.read_csv(folder / "decoding_cost.csv").max_abs_error < 1e-8).all()
    summary = pd.read_csv(folder / "summary.csv")
    assert {"scheme", "metric", *SUMMARY_COLUMNS, "median", "max"} <= set(summary.columns)
    shown = decoding_display(summary)
    assert (shown.max_abs_error < 1e-8).all()
    ops = shown.pivot_table(index=["sweep", "n_workers", "dim"], columns="scheme", values="ops")
    assert (ops["mds"] > ops["rcsc"]).all()
