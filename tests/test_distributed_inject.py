"""Injection plans (drawn at the master) and their acting-out, without a cluster."""
from __future__ import annotations

import time

import numpy as np
import pytest

from gcc.distributed.actors import CodedWorker
from gcc.distributed.inject import Injection, TaskFault, sample_delays
from gcc.stragglers import ShiftedExponential, SlowWorkers


def test_plan_is_reproducible_from_the_seed():
    inj = Injection(base_s=0.01, delay=ShiftedExponential(shift=1.0, rate=2.0), delay_scale=0.1,
                    n_random_slow=2, slowdown=5, sleep_prob=0.3)
    a = inj.plan(8, np.random.default_rng(3))
    b = inj.plan(8, np.random.default_rng(3))
    assert a == b
    assert sum(f.slowdown == 5 for f in a) == 2
    assert all(f.delay_s >= 0.1 for f in a)          # shift 1 task unit x delay_scale 0.1 s


def test_persistent_slow_workers_and_kill_positions():
    plans = [Injection(slow_workers=[1, 6], slowdown=10, kill=[3]).plan(8, np.random.default_rng(s)) for s in range(5)]
    for plan in plans:
        assert [i for i, f in enumerate(plan) if f.slowdown == 10] == [1, 6]
        assert [i for i, f in enumerate(plan) if f.die] == [3]


def test_sleep_with_probability_p_rule():
    inj = Injection(sleep_prob=0.2, sleep_s=0.006)
    delays = np.array([[f.delay_s for f in inj.plan(40, np.random.default_rng(s))] for s in range(200)])
    assert set(np.unique(delays)) <= {0.0, 0.006}
    assert abs((delays > 0).mean() - 0.2) < 0.02       # 8000 Bernoulli(0.2) draws


def test_slow_workers_model_from_gcc_stragglers():
    model = SlowWorkers(slow=[2], factor=10.0, shift=1.0, rate=1e6)
    delays = sample_delays(model, 4, np.random.default_rng(0))
    np.testing.assert_allclose(delays, [1, 1, 10, 1], rtol=1e-4)


def test_expected_task_times_follow_the_plan():
    inj = Injection(base_s=0.1, slow_workers=[0], slowdown=10, kill=[2])
    times = inj.expected_task_s(4, np.random.default_rng(0))
    np.testing.assert_allclose(times[[0, 1, 3]], [1.0, 0.1, 0.1])
    assert times[2] == np.inf


def test_coded_worker_sleeps_the_slowed_time_outside_a_cluster():
    import asyncio

    fault = TaskFault(base_s=0.05, slowdown=2.0, delay_s=0.02, interruptible=True)
    t0 = time.perf_counter()
    out, timing = asyncio.run(CodedWorker().run(lambda x: x + 1, 41, fault, "batch"))
    assert out == 42
    assert 0.11 <= time.perf_counter() - t0 < 0.5        # 2 x 50 ms + 20 ms
    assert timing["busy_s"] >= timing["slept_s"] >= 0.11


@pytest.mark.parametrize("kwargs,match", [
    ({"slowdown": 0.5}, "'slowdown' parameter of Injection must be .*>= 1\\. Got 0.5 instead"),
    ({"sleep_prob": 1.5}, "'sleep_prob' parameter of Injection must be .*1\\]?\\. Got 1.5 instead"),
    ({"n_random_slow": 9}, "'n_random_slow' parameter of Injection must be an int .*8\\]?\\. Got 9 instead"),
    ({"kill": [8]}, "'kill' parameter of Injection must be worker positions in \\[0, 8\\)\\. Got \\[8\\]"),
    ({"base_s": -1}, "'base_s' parameter of Injection must be .*>= 0\\. Got -1 instead"),
    ({"delay": "fast"}, "'delay' parameter of Injection must be a gcc.stragglers delay model"),
])
def test_bad_injections_name_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Injection(**kwargs).plan(8, np.random.default_rng(0))


# --------------------------------------------------------------------------- issue 15: the contract
import gcc  # noqa: E402
from gcc.distributed.baselines import Replication, Uncoded  # noqa: E402
from gcc.distributed.inject import interruptible_sleep  # noqa: E402
from gcc.distributed.latency import run_requests, simulated_completion, summarize_latency  # noqa: E402


@pytest.mark.parametrize("call,match", [
    (lambda: Injection(slow_workers=[1.5]), r"'slow_workers' parameter of Injection.*1.5 is not an int"),
    (lambda: Injection(kill=[1, 1]), r"'kill'.*repeats"), (lambda: Injection(kill=3), "'kill'"),
    (lambda: Injection(n_random_slow=-1), "'n_random_slow'"), (lambda: Injection(delay="fast"), "'delay'"),
    (lambda: Injection(interruptible=None), "'interruptible'"),
    (lambda: Injection().plan(0, np.random.default_rng(0)), "'n_tasks' parameter of Injection.plan"),
    (lambda: Injection().plan(4, 0), "'rng' parameter of Injection.plan"),
    (lambda: Injection(delay=lambda rng, n: np.ones(n) * 1j).plan(3, np.random.default_rng(0)), "'delay'"),
    (lambda: Injection(delay=lambda rng, n: ["a"] * n).plan(3, np.random.default_rng(0)), "'delay'"),
    (lambda: sample_delays(ShiftedExponential(), -1, np.random.default_rng(0)), "'n' parameter of sample_delays"),
    (lambda: sample_delays(ShiftedExponential(), 2, None), "'rng' parameter of sample_delays"),
    (lambda: interruptible_sleep(float("inf")), "'seconds' parameter of interruptible_sleep"),
    (lambda: interruptible_sleep(float("nan")), "'seconds'"), (lambda: interruptible_sleep(0.0, "no"), "'interruptible'"),
    (lambda: Replication(0, 3), "'n_inputs' parameter of Replication"),
    (lambda: Replication(3, 2), r"'n_workers' parameter of Replication must be an int >= 2 \* n_inputs"),
    (lambda: Replication(2, 3), r"'n_workers' parameter of Replication must be an int >= 2 \* n_inputs \(two "
                                r"copies of every input\)\. Got 3 instead"),
    (lambda: TaskFault(slowdown=0.0), r"'slowdown' parameter of TaskFault must be .*>= 1\. Got 0.0 instead"),
    (lambda: TaskFault(slowdown=float("nan")), r"'slowdown' parameter of TaskFault.*Got nan instead"),
    (lambda: TaskFault(slowdown="2"), r"'slowdown' parameter of TaskFault.*Got '2' instead"),
    (lambda: TaskFault(delay_s=-0.1), r"'delay_s' parameter of TaskFault must be .*>= 0\. Got -0.1 instead"),
    (lambda: TaskFault(delay_s=float("nan")), r"'delay_s' parameter of TaskFault.*Got nan instead"),
    (lambda: TaskFault(delay_s=float("inf")), r"'delay_s' parameter of TaskFault.*Got inf instead"),
    (lambda: Uncoded(1.5), "'n_inputs' parameter of Uncoded"),
    (lambda: Replication(2, 4).is_decodable([0, 1.7]), r"'received'.*1.7 is not an int"),
    (lambda: Replication(2, 4).is_decodable([0, 4]), "'received'"),
    (lambda: Replication(2, 4).decode(np.arange(3), [0, 1]), "'Y' parameter of Replication.decode"),
    (lambda: Replication(2, 4).decode(np.arange(2), [1, 0]), "'received' parameter of Replication.decode"),
    (lambda: simulated_completion(Uncoded(3), [0.1, np.nan, 0.2]), "'task_s' parameter of simulated_completion"),
    (lambda: simulated_completion(Uncoded(3), [0.1, -1.0, 0.2]), "'task_s'"),
    (lambda: simulated_completion(Uncoded(2), [0.1, 0.2], n_wait=3), "'n_wait'"),
    (lambda: simulated_completion(Replication(2, 4), [0.1, 0.2, 0.3]),
     r"'task_s' parameter of simulated_completion must be one time per worker of the code \(n_workers = 4\) "
     r"\(it has 3\)"),
    (lambda: simulated_completion(gcc.SplineCode(n_inputs=4, n_workers=8), np.ones(8), n_wait=3),
     r"'n_wait' parameter of simulated_completion must be an int in \[n_inputs, n_workers\] = \[4, 8\]\. "
     r"Got 3 instead"),
    (lambda: run_requests(None, {}, lambda rng: 0, np.sin, n_requests=1), "'schemes' parameter of run_requests"),
    (lambda: run_requests(None, {"a": {"code": Uncoded(2)}}, 3, np.sin, n_requests=1), "'make_batch'"),
    (lambda: run_requests(None, {"a": {"code": Uncoded(2)}}, np.sin, np.sin, n_requests=1, seed=0.5), "'seed'"),
    (lambda: run_requests(None, {"a": {"code": Uncoded(2)}}, np.sin, np.sin, n_requests=1, injection=3),
     "'injection'"),
    (lambda: summarize_latency(3), "'table' parameter of summarize_latency"),
])
def test_public_arguments_get_the_contract_message(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_run_cpgc_checks_its_arguments_before_touching_the_cluster():
    from gcc.cpgc import make_code
    from gcc.cpgc.regression import synthetic_regression
    from gcc.distributed.cpgc import run_cpgc

    p, code = synthetic_regression(20, 5, 4), make_code("rcsc", 4, degrees=(1, 2))
    for kwargs, name in ((dict(problem=3), "'problem'"), (dict(code=3), "'code'"), (dict(seed="0"), "'seed'"),
                         (dict(eta=-0.1), "'eta'"), (dict(cancel_stragglers=1), "'cancel_stragglers'")):
        args = dict(problem=p, code=code) | kwargs
        with pytest.raises(ValueError, match=f"{name} parameter of run_cpgc"):
            run_cpgc(None, args.pop("problem"), args.pop("code"), **args)


def test_baselines_accept_empty_and_unordered_received_sets():
    r = Replication(3, 7)
    assert not r.is_decodable([]) and r.is_decodable([5, 1, 0]) and not r.is_decodable(np.array([0, 3]))
    np.testing.assert_array_equal(r.decode(np.arange(3) * 10, [0, 1, 2]), [0, 10, 20])
    assert Injection(slow_workers=np.array([2, 0])).slow_workers == (2, 0)
