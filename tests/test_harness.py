"""Simulation harness: pairing of schemes, reproducibility, accounting of bad draws, hook, received sets."""
import numpy as np
import pytest

import gcc
from gcc import harness
from gcc.harness import MEASURED_COLUMNS, evaluate, run_trials, trial_rngs
from gcc.metrics import mean_ci
from gcc.summary import slope_table, summarize


class RecordingCode:
    """Stand-in linear code (piecewise-linear interpolation) that records what it decodes."""

    def __init__(self, K, N, shift=0.0):
        self.n_inputs, self.n_workers = K, N
        self.alphas = np.cos((2 * np.arange(K, 0, -1) - 1) * np.pi / (2 * K))
        self.betas = np.linspace(-1, 1, N)
        self.shift = shift
        self.received_log, self.Y_log = [], []

    def encode(self, X):
        E = np.stack([np.interp(self.betas, self.alphas, e) for e in np.eye(self.n_inputs)], 1)
        return np.tensordot(E, np.asarray(X), axes=1) + self.shift

    def decode(self, Y, received):
        received = np.asarray(received)
        self.received_log.append(received.copy())
        self.Y_log.append(np.asarray(Y).copy())
        D = np.stack([np.interp(self.alphas, self.betas[received], e)
                      for e in np.eye(len(received))], 1)
        return np.tensordot(D, np.asarray(Y), axes=1)


def f(x):
    return x * np.sin(x)


X0 = np.linspace(-2.0, 2.5, 6)


def test_same_received_sets_and_noise_for_every_scheme():
    a, b = RecordingCode(6, 20), RecordingCode(6, 20)
    df = run_trials({"a": a, "b": b}, f, X0, gcc.FixedCount(4), trials=7, seed=3, noise_std=0.1)
    assert len(df) == 14 and set(df.scheme) == {"a", "b"}
    assert len(a.received_log) == len(b.received_log) == 7
    for ra, rb, ya, yb in zip(a.received_log, b.received_log, a.Y_log, b.Y_log):
        np.testing.assert_array_equal(ra, rb)
        assert ra.size == 16
        np.testing.assert_array_equal(ya, yb)  # identical codes + shared noise
    # the draws differ from trial to trial
    assert len({tuple(r) for r in a.received_log}) > 1
    # received sets are those of the documented per-trial stream
    for t, r in enumerate(a.received_log):
        np.testing.assert_array_equal(r, gcc.FixedCount(4).sample(trial_rngs(3, t)[1], 20))
    assert np.allclose(df.loc[df.scheme == "a", "loss"].to_numpy(),
                       df.loc[df.scheme == "b", "loss"].to_numpy())


def test_shared_sets_with_different_encoders():
    a, b = RecordingCode(6, 20), RecordingCode(6, 20, shift=0.3)
    run_trials({"a": a, "b": b}, f, X0, gcc.Bernoulli(0.3), trials=5, seed=0, noise_std=0.01)
    for ra, rb, ya, yb in zip(a.received_log, b.received_log, a.Y_log, b.Y_log):
        np.testing.assert_array_equal(ra, rb)
        assert not np.allclose(ya, yb)


def test_reproducible_and_seed_dependent():
    codes = {"GCC": gcc.SplineCode(6, 30), "BACC": gcc.BerrutCode(6, 30)}
    d1 = run_trials(codes, f, X0, gcc.FixedCount(5), trials=6, seed=11, noise_std=0.05)
    d2 = run_trials(codes, f, X0, gcc.FixedCount(5), trials=6, seed=11, noise_std=0.05)
    d3 = run_trials(codes, f, X0, gcc.FixedCount(5), trials=6, seed=12, noise_std=0.05)
    assert d1.equals(d2)
    assert not np.allclose(d1.loss.to_numpy(), d3.loss.to_numpy())
    # trial t does not depend on the number of trials
    d4 = run_trials(codes, f, X0, gcc.FixedCount(5), trials=3, seed=11, noise_std=0.05)
    assert np.array_equal(d4.loss.to_numpy(), d1.loss.to_numpy()[:6])
    for col in ("scheme", "n_workers", "n_inputs", "stragglers", "received", "trial", "loss",
                "rmse_norms", "rmse_rms", "too_few_survivors"):
        assert col in d1.columns
    assert set(d1.stragglers) == {5} and set(d1.received) == {25}


def test_rows_match_evaluate_and_metrics():
    code = gcc.SplineCode(6, 25)
    df = run_trials({"GCC": code}, f, X0, gcc.ContiguousBlock(3, start=4), trials=2, seed=0)
    received = np.r_[0:4, 7:25]
    ev = evaluate(code, f, X0, received)
    manual = np.mean((code.decode(f(code.encode(X0))[received], received) - f(X0)) ** 2)
    assert ev["loss"] == pytest.approx(manual, rel=1e-12)
    assert df.loss.iloc[0] == pytest.approx(manual, rel=1e-12)
    assert ev["rmse_rms"] == pytest.approx(np.sqrt(manual))


def test_labels_and_callable_batches():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(4, 3))

    def softmax_net(x):
        z = np.asarray(x) @ W
        z = np.exp(z - z.max(-1, keepdims=True))
        return z / z.sum(-1, keepdims=True)

    def source(rng, t):
        x = rng.normal(size=(8, 4))
        return x, softmax_net(x).argmax(1)

    codes = {"GCC": gcc.SplineCode(8, 24), "BACC": gcc.BerrutCode(8, 24)}
    df = run_trials(codes, softmax_net, source, gcc.FixedCount(4), trials=4, seed=1)
    assert np.all(df.accuracy_base == 1.0)  # labels are the base model's predictions
    np.testing.assert_allclose(df.relacc, df.accuracy / df.accuracy_base)
    np.testing.assert_allclose(df.relacc_literal, df.accuracy_base / df.accuracy)
    # each trial draws its own batch from the trial's data stream
    x0 = source(trial_rngs(1, 0)[0], 0)[0]
    x1 = source(trial_rngs(1, 1)[0], 1)[0]
    assert not np.allclose(x0, x1)
    labels = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    df2 = run_trials(codes, softmax_net, x0, gcc.FixedCount(4), trials=2, seed=1, labels=labels)
    assert "relacc" in df2.columns


def test_too_few_survivors_counted_not_dropped():
    model = gcc.Bernoulli(0.8, min_survivors=3)
    codes = {"a": RecordingCode(3, 6), "b": RecordingCode(3, 6)}
    with pytest.warns(RuntimeWarning, match="too_few_survivors"):
        df = run_trials(codes, f, X0[:3], model, trials=40, seed=0)
    expected = sum(model.sample(trial_rngs(0, t)[1], 6).size < 3 for t in range(40))
    assert expected > 0
    assert df.attrs["n_too_few_survivors"] == expected
    assert len(df) == 80 and df.too_few_survivors.sum() == 2 * expected
    assert df.loc[df.too_few_survivors, "loss"].isna().all()
    assert df.loc[~df.too_few_survivors, "loss"].notna().all()
    s = summarize(df, by=("scheme",))
    assert (s.n_nan == expected).all() and (s.n == 40 - expected).all()


def test_delay_model_time_column():
    codes = {"GCC": gcc.SplineCode(6, 20), "BACC": gcc.BerrutCode(6, 20)}
    model = gcc.ShiftedExponential(1.0, 2.0, stragglers=4)
    df = run_trials(codes, f, X0, model, trials=5, seed=2)
    assert (df.stragglers == 4).all() and (df.time > 1.0).all()
    t = df.pivot(index="trial", columns="scheme", values="time")
    np.testing.assert_array_equal(t["GCC"], t["BACC"])
    _, waited = model.sample_many_with_time(trial_rngs(2, 0)[1], 20, 16, 1)
    assert t["GCC"].iloc[0] == pytest.approx(waited[0])


def test_worst_case_model():
    codes = {"GCC": gcc.SplineCode(6, 20), "BACC": gcc.BerrutCode(6, 20)}
    df = run_trials(codes, f, X0, gcc.WorstCase(3), trials=1, seed=0)
    for name, code in codes.items():
        _, loss = gcc.worst_case_stragglers(code, f, X0, 3, return_loss=True)
        assert df.loc[df.scheme == name, "loss"].iloc[0] == pytest.approx(loss, rel=1e-12)
    # against one scheme: that scheme's worst set is shared, so the other can only be better
    df2 = run_trials(codes, f, X0, gcc.WorstCase(3, against="GCC"), trials=1, seed=0)
    assert df2.loc[df2.scheme == "GCC", "loss"].iloc[0] == pytest.approx(
        df.loc[df.scheme == "GCC", "loss"].iloc[0])
    assert df2.loc[df2.scheme == "BACC", "loss"].iloc[0] <= df.loc[df.scheme == "BACC",
                                                                   "loss"].iloc[0] * (1 + 1e-12)


def test_numpy_and_torch_agree():
    torch = pytest.importorskip("torch")
    codes = {"GCC": gcc.SplineCode(6, 20), "BACC": gcc.BerrutCode(6, 20)}
    d_np = run_trials(codes, f, X0, gcc.FixedCount(3), trials=3, seed=0, noise_std=0.01)
    d_t = run_trials(codes, lambda x: x * torch.sin(x), torch.tensor(X0), gcc.FixedCount(3),
                   trials=3, seed=0, noise_std=0.01)
    np.testing.assert_allclose(d_np.loss, d_t.loss, rtol=1e-10)


def test_tables_summarize_with_the_one_summary():
    codes = {"GCC": gcc.SplineCode(6, 20)}
    df = run_trials(codes, f, X0, gcc.FixedCount(3), trials=6, seed=0)
    s = summarize(df)
    ci = mean_ci(df.loss)
    assert s["mean"].iloc[0] == pytest.approx(ci.mean)
    assert s["ci_low"].iloc[0] == pytest.approx(ci.low)
    # one summary function: the harness has none of its own; gcc.summarize is gcc.summary's
    assert not hasattr(harness, "summarize") and gcc.summarize is summarize


@pytest.mark.parametrize("kwargs,name", [
    (dict(trials=0), "'trials'"), (dict(trials=2.5), "'trials'"), (dict(seed=-1), "'seed'"),
    (dict(seed=1.5), "'seed'"), (dict(noise_std=-0.1), "'noise_std'"),
    (dict(noise_std=float("inf")), "'noise_std'"), (dict(codes={}), "'codes'"),
    (dict(codes={"a": gcc.SplineCode(6, 20), "b": gcc.SplineCode(6, 21)}), "'codes'"),
    (dict(codes={"a": object()}), "'codes'"), (dict(X=np.ones(5)), "'X'"),
    # strings would reach f and fail there with numpy's message
    (dict(X=X0.astype(str)), r"'X' parameter of run_trials must be an array of numbers.*dtype is <U"),
    (dict(X=lambda rng, t: X0.astype(str)), r"'X' parameter of run_trials must be an array of numbers"),
    (dict(labels=np.zeros(5, int)), "'labels'"), (dict(labels=np.zeros(6)), "'labels'"),
    (dict(model=gcc.WorstCase(20)), "'straggler_model'"),
    (dict(model=gcc.WorstCase(2, against="LCC")), "'straggler_model'"),
    (dict(model="random"), "'straggler_model'"), (dict(f=3), "'f'"),
])
def test_bad_arguments(kwargs, name):
    args = dict(codes={"GCC": gcc.SplineCode(6, 20)}, f=f, X=X0, model=gcc.FixedCount(2),
                trials=2, seed=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        run_trials(args["codes"], args["f"], args["X"], args["model"], args["trials"],
                 args["seed"], labels=args.get("labels"), noise_std=args.get("noise_std", 0.0))


def test_run_trials_is_the_one_name():
    # gcc.simulate / gcc.cpgc.simulate were two different things under one name (issue 11)
    assert gcc.run_trials is run_trials
    assert not hasattr(harness, "simulate") and not hasattr(gcc, "simulate")
    assert "simulate" not in harness.__all__


def test_return_received_gives_each_trials_sets():
    a, b = RecordingCode(6, 20), RecordingCode(6, 20)
    df, received = run_trials({"a": a, "b": b}, f, X0, gcc.Bernoulli(0.3), trials=5, seed=4,
                              return_received=True)
    assert len(received) == 5 and all(set(r) == {"a", "b"} for r in received)
    for t, r in enumerate(received):
        assert r["a"] is r["b"]  # one set shared by every scheme
        assert r["a"].dtype.kind == "i" and np.all(np.diff(r["a"]) > 0)
        np.testing.assert_array_equal(r["a"], a.received_log[t])
        np.testing.assert_array_equal(r["a"], gcc.Bernoulli(0.3).sample(trial_rngs(4, t)[1], 20))
        assert (df.loc[df.trial == t, "received"] == r["a"].size).all()
    # without the flag, the table alone, identical
    assert run_trials({"a": a, "b": b}, f, X0, gcc.Bernoulli(0.3), trials=5, seed=4).equals(df)


def test_return_received_worst_case_one_set_per_scheme():
    codes = {"GCC": gcc.SplineCode(6, 20), "BACC": gcc.BerrutCode(6, 20)}
    _, received = run_trials(codes, f, X0, gcc.WorstCase(3), trials=1, seed=0,
                             return_received=True)
    for name, code in codes.items():
        np.testing.assert_array_equal(received[0][name],
                                      gcc.worst_case_stragglers(code, f, X0, 3))
    _, shared = run_trials(codes, f, X0, gcc.WorstCase(3, against="GCC"), trials=1, seed=0,
                           return_received=True)
    assert shared[0]["GCC"] is shared[0]["BACC"]


def test_return_received_keeps_too_few_survivor_draws():
    model = gcc.Bernoulli(0.8, min_survivors=3)
    with pytest.warns(RuntimeWarning):
        df, received = run_trials({"a": RecordingCode(3, 6)}, f, X0[:3], model, trials=20,
                                  seed=0, return_received=True)
    sizes = np.array([r["a"].size for r in received])
    np.testing.assert_array_equal(sizes < 3, df.too_few_survivors.to_numpy())


def test_hook_sees_what_each_trial_computed():
    a, b = RecordingCode(6, 20), RecordingCode(6, 20, shift=0.2)
    seen = []

    def hook(ctx):
        seen.append(ctx)
        assert isinstance(ctx, harness.TrialContext)
        np.testing.assert_array_equal(ctx.outputs[ctx.received], ctx.code.Y_log[-1])
        np.testing.assert_allclose(ctx.outputs - ctx.noise, f(ctx.code.encode(ctx.inputs)))
        np.testing.assert_allclose(ctx.true, f(ctx.inputs))
        assert ctx.row["loss"] == pytest.approx(np.mean((ctx.estimate - ctx.true) ** 2))
        return {"max_error": float(np.abs(ctx.estimate - ctx.true).max())}

    df, received = run_trials({"a": a, "b": b}, f, X0, gcc.FixedCount(4), trials=3, seed=1,
                              noise_std=0.1, on_trial=hook, return_received=True)
    assert [(c.trial, c.scheme) for c in seen] == list(zip(df.trial, df.scheme))
    for c in seen:
        assert c.received is received[c.trial][c.scheme]
        assert c.noise is seen[2 * c.trial].noise  # one noise draw per trial, shared
        assert c.labels is None and len(c.rngs) == 3
    np.testing.assert_allclose(df.max_error, [np.abs(c.estimate - c.true).max() for c in seen])
    # the measured columns do not depend on the hook
    plain = run_trials({"a": a, "b": b}, f, X0, gcc.FixedCount(4), trials=3, seed=1,
                       noise_std=0.1)
    assert df.drop(columns="max_error").equals(plain)


def test_hook_may_draw_from_the_trial_rngs_and_return_none():
    codes = {"GCC": gcc.SplineCode(6, 20), "BACC": gcc.BerrutCode(6, 20)}

    def draw(ctx):
        for rng in ctx.rngs:
            rng.standard_normal(5)

    plain = run_trials(codes, f, X0, gcc.FixedCount(4), trials=3, seed=2, noise_std=0.1)
    hooked = run_trials(codes, f, X0, gcc.FixedCount(4), trials=3, seed=2, noise_std=0.1,
                        on_trial=draw)
    assert hooked.equals(plain)


def test_hook_on_too_few_survivors_gets_no_estimate():
    seen = []
    with pytest.warns(RuntimeWarning):
        df = run_trials({"a": RecordingCode(3, 6)}, f, X0[:3], gcc.Bernoulli(0.8, min_survivors=3),
                        trials=20, seed=0, noise_std=0.1, on_trial=seen.append)
    for c, few in zip(seen, df.too_few_survivors):
        assert (c.estimate is None and c.outputs is None and c.noise is None) == few
        assert c.row["too_few_survivors"] == few


@pytest.mark.parametrize("column", ["loss", "scheme", "time", "relacc", "model"])
def test_hook_never_overwrites_a_column(column):
    codes = {"GCC": gcc.SplineCode(6, 20)}
    with pytest.raises(ValueError, match=f"'on_trial'.*'{column}' is an? (measured|extra) column"):
        run_trials(codes, f, X0, gcc.FixedCount(2), trials=2, seed=0,
                   extra_columns={"model": "m"}, on_trial=lambda ctx: {column: 1.0})


def test_extra_columns_never_overwrite_a_measured_column():
    codes = {"GCC": gcc.SplineCode(6, 20)}
    for key in ("loss", "trial", "accuracy"):
        with pytest.raises(ValueError, match=f"'extra_columns'.*'{key}' is a measured column"):
            run_trials(codes, f, X0, gcc.FixedCount(2), trials=2, seed=0,
                       extra_columns={"model": "vit", key: 0.0})
    df = run_trials(codes, f, X0, gcc.FixedCount(2), trials=2, seed=0,
                    extra_columns={"model": "vit"})
    assert (df.model == "vit").all()
    assert set(df.columns) - {"model"} <= set(MEASURED_COLUMNS)


@pytest.mark.parametrize("kwargs,name", [
    (dict(on_trial=3), "'on_trial'"), (dict(on_trial=lambda ctx: 1.0), "'on_trial'"),
    (dict(return_received="yes"), "'return_received'"), (dict(extra_columns=[1]), "'extra_columns'"),
])
def test_bad_hook_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        run_trials({"GCC": gcc.SplineCode(6, 20)}, f, X0, gcc.FixedCount(2), 2, 0, **kwargs)


def test_an_entry_point_built_on_run_trials_is_named_in_messages():
    from gcc.validation import entry

    with pytest.raises(ValueError, match="'X' parameter of my_sweep"), entry("my_sweep"):
        run_trials({"GCC": gcc.SplineCode(6, 20)}, f, np.ones(5), gcc.FixedCount(2), 2, 0)
    with pytest.raises(TypeError, match="'X' parameter of run_trials"):   # also a TypeError
        run_trials({"GCC": gcc.SplineCode(6, 20)}, f, np.ones(5), gcc.FixedCount(2), 2, 0)


# --------------------------------------------------------------------------- issue 15: the contract
def _bad_sample_model(mask):
    class Model:
        min_survivors = 1

        def sample_many(self, rng, n_workers, trials):
            return mask

    return Model()


@pytest.mark.parametrize("kwargs,message", [
    (dict(f=lambda x: np.zeros(2)), r"'f' parameter of run_trials .*\(f\(X\) of 6 rows gave shape \(2,\)\)"),
    (dict(f=lambda x: "s"), r"'f'.*gave a str"),
    (dict(f=lambda x: np.array(["a"] * len(x))), r"'f'.*dtype <U1"),
    (dict(f=lambda x: np.zeros((len(x), 1 + (len(x) > 6)))), r"'f'.*f\(code.encode\(X\)\) of 20 rows"),
    (dict(model=_bad_sample_model("x")), r"'straggler_model'.*boolean array of shape \(1, 20\)"),
    (dict(model=_bad_sample_model(np.ones((1, 19), bool))), "'straggler_model'"),
    (dict(model=gcc.FixedCount(20)), r"'straggler_model'.*stragglers < n_workers \(= 20\)"),
    (dict(seed="0"), "'seed'"), (dict(seed=np.random.default_rng(0)), "'seed'"),
    (dict(codes={"a": 3}), r"'codes'.*scheme 'a': it has no 'n_inputs'"),
    (dict(return_received=1), "'return_received'"),
])
def test_bad_callables_models_and_seeds_get_the_contract_message(kwargs, message):
    args = dict(codes={"a": RecordingCode(6, 20)}, f=f, X=X0, model=gcc.FixedCount(2), trials=2, seed=0)
    args.update(kwargs)
    extra = {k: args.pop(k) for k in ("return_received",) if k in args}
    with pytest.raises(ValueError, match=message):
        run_trials(args["codes"], args["f"], args["X"], args["model"], args["trials"], args["seed"], **extra)


def test_labels_must_be_classes_of_f():
    scores = lambda x: np.stack([np.sin(x), np.cos(x)], axis=-1)  # noqa: E731
    with pytest.raises(ValueError, match=r"'labels' parameter of run_trials must be a 1-D array of 6 int labels in \[0, 2\)"):
        run_trials({"a": RecordingCode(6, 20)}, scores, X0, gcc.FixedCount(2), 2, 0, labels=np.arange(6))


@pytest.mark.parametrize("kwargs,name", [
    (dict(received=[0, 1.7, 3, 4]), r"'received' parameter of evaluate.*1.7 is not an int"),
    (dict(received=[3, 1, 2]), "'received'"), (dict(received=[0, 0, 1]), "'received'"),
    (dict(received=[0, 20]), "'received'"), (dict(X=X0.astype(str)), r"'X' parameter of evaluate.*numbers"),
    (dict(f=3), "'f'"), (dict(f=lambda x: x[:2]), "'f'"), (dict(code=object()), "'code'"),
])
def test_evaluate_checks_its_arguments(kwargs, name):
    args = dict(code=gcc.BerrutCode(6, 20), f=np.sin, X=X0, received=list(range(16)))
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        evaluate(args.pop("code"), args.pop("f"), args.pop("X"), args.pop("received"), **args)


def test_trial_rngs_checks_its_arguments():
    for bad in (-1, 0.5, "0", None):
        with pytest.raises(ValueError, match="'seed' parameter of trial_rngs"):
            trial_rngs(bad, 0)
    with pytest.raises(ValueError, match="'trial' parameter of trial_rngs"):
        trial_rngs(0, -1)


@pytest.mark.parametrize("cls", [gcc.BerrutCode, gcc.LagrangeCode])
def test_complex_data_are_scored_by_modulus(cls):
    # f linear: the complex run is the real run plus i times the imaginary run, same draws
    code = cls(6, 20)
    lin = lambda x: 2.0 * x  # noqa: E731
    Xc = X0 + 1j * X0[::-1]
    run = lambda X: run_trials({"c": code}, lin, X, gcc.FixedCount(3), 4, 5).loss.to_numpy()  # noqa: E731
    np.testing.assert_allclose(run(Xc), run(X0) + run(X0[::-1]), rtol=1e-9, atol=1e-24)
    out = evaluate(code, lin, Xc, range(17))
    assert np.iscomplexobj(out["estimate"]) and np.isfinite(out["loss"])


@pytest.mark.parametrize("call,name", [
    (lambda df: summarize(df.assign(loss=df.loss * 1j), "loss", by=["scheme"]), r"'value'.*complex"),
    (lambda df: summarize(df.assign(loss="x"), "loss", by=["scheme"]), "'value'"),
    (lambda df: summarize(df, "loss", by=["scheme"], level=True), "'level'"),
    (lambda df: summarize(df, [["loss"]], by=["scheme"]), "'value'"),
    (lambda df: summarize(df.values, "loss"), "'df'"),
    (lambda df: slope_table(df, "N", ["scheme"], y_floor=np.nan), "'y_floor'"),
    (lambda df: slope_table(df, "N", ["scheme"], level=2), "'level' parameter of slope_table"),
    (lambda df: slope_table(df, "N", ["scheme"], shift=-100.0), r"'shift'.*N \+ shift > 0"),
    (lambda df: slope_table(df, "N", ["scheme"], x_min="8"), "'x_min'"),
    (lambda df: slope_table(df, "N", ["scheme"], x_min=lambda g: "8"), "'x_min'"),
    (lambda df: slope_table(df, "N", ["scheme"], y="nope"), "'y'"),
    (lambda df: slope_table(df.assign(loss=df.loss * 1j), "N", ["scheme"], y="loss"), r"'y'.*complex"),
])
def test_summaries_check_their_arguments(call, name):
    import pandas as pd

    n = np.array([16, 32, 64, 128])
    df = pd.DataFrame({"scheme": "gcc", "N": n, "loss": 5.0 * n ** -3.0, "mean": 5.0 * n ** -3.0})
    with pytest.raises(ValueError, match=name):
        call(df)


def test_summaries_read_nullable_and_boolean_columns():
    import pandas as pd

    df = pd.DataFrame({"g": ["a"] * 3, "v": pd.array([1.0, None, 3.0], dtype="Float64"),
                       "flag": [True, False, True]})
    out = summarize(df, ["v", "flag"], by=["g"])
    assert out.loc[out.metric == "v", "n_nan"].item() == 1 and out.loc[out.metric == "flag", "mean"].item() == 2 / 3
