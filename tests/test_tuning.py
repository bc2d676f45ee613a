"""Lambda grid search: agrees with the harness, picks the argmin, validates its input."""
import numpy as np
import pytest
import pandas as pd

import gcc
from gcc.harness import run_trials
from gcc.tuning import DEFAULT_LAMBDA_GRID, select_lambdas


def f(x):
    return x * np.sin(x)


def test_default_grid():
    g = DEFAULT_LAMBDA_GRID
    assert g[0] == 0.0 and np.allclose(np.log10(g[1:]), np.arange(-8, 1))


def test_table_agrees_with_simulate_and_best_is_argmin():
    rng = np.random.default_rng(0)
    batches = [np.sort(rng.uniform(-2, 2, 6)) for _ in range(3)]
    ge, gd = [0.0, 1e-4, 1e-1], [0.0, 1e-5, 1e-2]
    sel = select_lambdas(lambda le, ld: gcc.SplineCode(6, 24, lam_enc=le, lam_dec=ld), f,
                         batches, gcc.FixedCount(4), ge, gd, trials=6, seed=5, noise_std=0.05)
    t = sel.table
    assert len(t) == 9 and set(t.columns) >= {"lam_enc", "lam_dec", "mean", "ci_low", "ci_high", "rank"}
    # the same draws through run_trials give the same mean loss for every grid point
    codes = {f"{le},{ld}": gcc.SplineCode(6, 24, lam_enc=le, lam_dec=ld) for le in ge for ld in gd}
    df = run_trials(codes, f, lambda rng, tr: batches[tr % 3], gcc.FixedCount(4), trials=6, seed=5,
                  noise_std=0.05)
    means = df.groupby("scheme").loss.mean()
    for _, row in t.iterrows():
        assert row["mean"] == pytest.approx(means[f"{row.lam_enc},{row.lam_dec}"], rel=1e-10)
    best = t.loc[t["mean"].idxmin()]
    assert (sel.lam_enc, sel.lam_dec) == (best.lam_enc, best.lam_dec)
    assert sel.score == pytest.approx(best["mean"])
    assert sorted(t["rank"]) == list(range(1, 10))


def test_noise_prefers_smoothing_decoder():
    # with noisy workers and many of them, some smoothing beats interpolation (Theorem 2)
    code = gcc.SplineCode(8, 200, points="equispaced")
    X = np.linspace(-2, 2, 8)
    sel = select_lambdas(code, f, [X], gcc.FixedCount(10), [0.0], [0.0, 1e-6, 1e-4, 1e-2],
                         trials=8, seed=0, noise_std=0.1)
    assert sel.lam_dec > 0
    t = sel.table.set_index("lam_dec")
    assert t.loc[sel.lam_dec, "mean"] < t.loc[0.0, "mean"]


def test_relacc_metric_is_maximised():
    rng = np.random.default_rng(1)
    W = rng.normal(size=(3, 4))

    def net(x):
        z = np.asarray(x) @ W
        return np.exp(z) / np.exp(z).sum(-1, keepdims=True)

    batches = []
    for _ in range(2):
        x = rng.normal(size=(10, 3))
        batches.append((x, net(x).argmax(1)))
    sel = select_lambdas(lambda le, ld: gcc.SplineCode(10, 30, lam_enc=le, lam_dec=ld), net,
                         batches, gcc.FixedCount(5), [0.0, 1e-2], [0.0, 1e-2], trials=4, seed=0,
                         metric="relacc")
    assert sel.score == pytest.approx(sel.table["mean"].max())


@pytest.mark.parametrize("kwargs,name", [
    (dict(lam_enc_grid=[-1.0]), "'lam_enc_grid'"), (dict(lam_dec_grid=[]), "'lam_dec_grid'"),
    (dict(lam_dec_grid=[0.0, 0.0]), "'lam_dec_grid'"), (dict(lam_enc_grid=[np.nan]), "'lam_enc_grid'"),
    (dict(metric="mae"), "'metric'"), (dict(metric="relacc"), "'labels'"),
    (dict(straggler_model=gcc.WorstCase(2)), "'straggler_model'"), (dict(trials=0), "'trials'"),
    (dict(seed=-3), "'seed'"), (dict(batches=[]), "'batches'"), (dict(make_code=3), "'make_code'"),
    (dict(noise_std=-1.0), "'noise_std'"), (dict(level=1.0), "'level'"), (dict(f=3), "'f'"),
    (dict(batches=[np.ones(5)]), r"'batches' parameter of select_lambdas.*batches\[0\] has shape \(5,\)"),
    (dict(labels=np.zeros(5, int)), "'labels' parameter of select_lambdas"),
    # issue 15: complex or string grids are rejected, not cast; a factory must give codes
    (dict(lam_dec_grid=[0.0, 1e-3j]), r"'lam_dec_grid'.*complex"), (dict(lam_enc_grid="0"), "'lam_enc_grid'"),
    (dict(lam_enc_grid=[[0.0]]), "'lam_enc_grid'"),
    (dict(make_code=lambda le, ld: 3), r"'make_code'.*make_code\(0, 0\) gave a int"),
    (dict(seed="0"), "'seed' parameter of select_lambdas"),
    (dict(f=lambda x: x[:2]), "'f' parameter of select_lambdas"),
])
def test_bad_arguments(kwargs, name):
    args = dict(make_code=gcc.SplineCode(6, 20), f=f, batches=[np.linspace(-1, 1, 6)],
                straggler_model=gcc.FixedCount(2), lam_enc_grid=[0.0], lam_dec_grid=[0.0],
                trials=2, seed=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        select_lambdas(**args)


def test_table_uses_the_summary_vocabulary_in_grid_order():
    from gcc.summary import SUMMARY_COLUMNS

    sel = select_lambdas(gcc.SplineCode(6, 20), f, [np.linspace(-1, 1, 6)], gcc.FixedCount(3),
                         [1e-2, 0.0], [1e-3, 0.0, 1e-6], trials=3, seed=1, noise_std=0.05)
    t = sel.table
    assert list(t.columns) == ["lam_enc", "lam_dec", "metric", *SUMMARY_COLUMNS, "rank", "enc_edge", "dec_edge"]
    assert list(zip(t.lam_enc, t.lam_dec)) == [(le, ld) for le in (1e-2, 0.0)
                                               for ld in (1e-3, 0.0, 1e-6)]
    assert (t.metric == "loss").all() and (t.n == 3).all()


def test_too_few_survivor_draws_are_nan_for_every_grid_point():
    model = gcc.Bernoulli(0.6, min_survivors=4)
    with pytest.warns(RuntimeWarning, match="select_lambdas"):
        sel = select_lambdas(gcc.SplineCode(6, 10), f, [np.linspace(-1, 1, 6)], model,
                             [0.0, 1e-3], [0.0, 1e-2], trials=15, seed=3)
    expected = sum(model.sample(gcc.harness.trial_rngs(3, t)[1], 10).size < 4 for t in range(15))
    assert expected > 0
    assert (sel.table.n_nan == expected).all() and (sel.table.n == 15 - expected).all()



# --- issue 22: interior optima ------------------------------------------------------------------

def test_grid_edge_zero_is_the_domain_boundary_not_an_edge():
    from gcc.tuning import grid_edge

    g = [0.0, 1e-9, 1e-8, 1e-7]
    assert [grid_edge(v, g) for v in g] == ["zero", "bottom", "interior", "top"]
    assert grid_edge(1e-8, [1e-8, 1e-7, 1e-6]) == "bottom" and grid_edge(0.5, [0.5]) == "fixed"
    assert grid_edge(0.0, [0.0]) == "zero"


def _noisy(extend, dec_grid):
    # noisy workers: the best lambda_dec is well above 1e-7 (Theorem 2's smoothing)
    code = gcc.SplineCode(8, 120, points="equispaced")
    return select_lambdas(code, f, [np.linspace(-2, 2, 8)], gcc.FixedCount(10), [0.0], dec_grid,
                          trials=6, seed=3, noise_std=0.1, extend=extend)


def test_edge_is_reported_and_the_check_fails_the_run():
    from gcc.tuning import require_interior

    sel = _noisy(0, [0.0, 1e-8, 1e-7])
    assert sel.lam_dec == 1e-7 and sel.dec_edge == "top" and sel.enc_edge == "zero" and sel.on_edge
    assert sel.lam_dec_grid == (0.0, 1e-8, 1e-7)
    table = pd.DataFrame({"lam_enc_edge": [sel.enc_edge], "lam_dec_edge": [sel.dec_edge]})
    with pytest.raises(ValueError, match=r"'lambdas' parameter of require_interior.*row 0: lam_dec_edge = 'top'"):
        require_interior(table)


def test_extension_reaches_an_interior_optimum_equal_to_the_search_on_the_final_grid():
    small = _noisy(0, [0.0, 1e-8, 1e-7])
    sel = _noisy(10, [0.0, 1e-8, 1e-7])
    assert not sel.on_edge and sel.dec_edge == "interior" and sel.lam_dec > 1e-7
    grid = sel.lam_dec_grid
    assert grid[:3] == (0.0, 1e-8, 1e-7) and np.allclose(np.diff(np.log10(grid[1:])), 1.0)
    # independent reference: a plain search on the final grid chooses the same value, same means
    ref = _noisy(0, list(grid))
    assert (ref.lam_dec, ref.dec_edge) == (sel.lam_dec, "interior")
    np.testing.assert_allclose(sel.table["mean"], ref.table["mean"], rtol=1e-12)
    # the given points keep their scores (same draws): extension only adds points
    np.testing.assert_allclose(sel.table["mean"].iloc[:3], small.table["mean"], rtol=1e-12)
    # the chosen value beats both neighbours on the final grid
    t = sel.table.set_index("lam_dec")["mean"]
    i = list(grid).index(sel.lam_dec)
    assert t[grid[i]] < t[grid[i - 1]] and t[grid[i]] < t[grid[i + 1]]


def test_extension_below_the_smallest_positive_value_and_its_budget():
    sel = _noisy(2, [1.0, 10.0])  # far too smooth: the choice sits at the bottom, two steps are not enough
    assert sel.lam_dec_grid == (1.0, 10.0, 0.1, 0.01) and sel.dec_edge == "bottom" and sel.on_edge
    assert _noisy(6, [1.0, 10.0]).lam_dec == 1e-5  # the interior optimum of the other test
    with pytest.raises(ValueError, match="'extend'"):
        _noisy(-1, [0.0, 1.0])


def test_a_bottom_choice_as_good_as_interpolation_is_a_plateau_not_an_edge():
    from gcc.tuning import _PLATEAU_RTOL as PLATEAU_RTOL

    code = gcc.SplineCode(8, 40, points="equispaced")
    sel = select_lambdas(code, f, [np.linspace(-2, 2, 8)], gcc.FixedCount(5), [0.0], [1e-15, 0.0, 1e-2],
                         trials=4, seed=3)
    t = sel.table.set_index("lam_dec")["mean"]
    assert sel.lam_dec == 1e-15 and abs(t[1e-15] - t[0.0]) <= PLATEAU_RTOL * t[0.0]
    assert sel.dec_edge == "plateau" and not sel.on_edge
