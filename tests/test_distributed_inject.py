"""Injection plans (drawn at the master) and their acting-out, without a cluster."""
from __future__ import annotations

import time

import numpy as np
import pytest

from gcc.distributed.inject import Injection, TaskFault, act_out, sample_delays
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


def test_act_out_sleeps_the_slowed_time_outside_a_worker():
    fault = TaskFault(base_s=0.05, slowdown=2.0, delay_s=0.02, interruptible=True)
    t0 = time.perf_counter()
    out, timing = act_out(fault, lambda: 41 + 1)
    assert out == 42
    assert 0.11 <= time.perf_counter() - t0 < 0.5        # 2 x 50 ms + 20 ms
    assert timing["busy_s"] >= timing["slept_s"] >= 0.11 and not timing["interrupted"]


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
