"""The CPGC notebooks' saved results after the ci batch (fixture ``ci_results``)."""
import pandas as pd


def test_completion_time_results(ci_results):
    folder = ci_results / "cpgc_completion_time"
    counting = pd.read_csv(folder / "counting_table_k4.csv")
    assert len(counting) == 45 and (counting.verdict == "agrees").all()
    table = pd.read_csv(folder / "completion_time.csv")
    assert set(table.scheme) == {"rcsc", "icassp-mds", "uc-mmc", "uc-smc", "mds", "gc"}
    assert set(table.tolerance) == {0.0, 0.15, 0.3}
    assert (table[table.scheme.isin(["mds", "gc"])].verdict == "agrees").all()
    assert {"mean_time", "time_ci_half", "mean_messages", "reference", "verdict"} <= set(table.columns)
    for name in ("claims", "code_variability", "exact_k4"):
        assert (folder / f"{name}.csv").exists()
    assert (folder / "completion_time.png").exists()


def test_convergence_results(ci_results):
    folder = ci_results / "cpgc_convergence"
    data = pd.read_csv(folder / "convergence.csv")
    assert {"scheme", "tolerance", "run", "iteration", "time", "test_error", "dim"} <= set(data.columns)
    first = data[data.iteration == 0].test_error
    last = data[data.iteration == data.iteration.max()].test_error
    assert last.max() < first.min()          # every scheme and q reduces the test error
    assert any(p.name.startswith("convergence_d") and p.suffix == ".png" for p in folder.iterdir())


def test_decoding_cost_results(ci_results):
    summary = pd.read_csv(ci_results / "cpgc_decoding_cost" / "summary.csv")
    assert (summary.max_abs_error < 1e-8).all()
    ops = summary.pivot_table(index=["sweep", "n_workers", "dim"], columns="scheme", values="ops")
    assert (ops["mds"] > ops["rcsc"]).all()
