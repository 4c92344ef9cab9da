"""Sharding across hosts: every layout placed once, LPT's 4/3 bound against the true optimum,
and the same plan for the same input."""

import itertools

import pytest
from hypothesis import given, strategies as st

from zfslab.errors import FleetError
from zfslab.model.sharding import Job, lower_bound_s, makespan_s, shard

times = st.floats(0, 10_000, allow_nan=False)
job_lists = st.lists(times, max_size=40).map(lambda ts: [Job(f"layout{i}", t) for i, t in enumerate(ts)])
host_lists = st.integers(1, 12).map(lambda n: [f"host{i}" for i in range(n)])


def _optimal_s(jobs, hosts: int) -> float:
    """Brute force: every assignment of jobs to hosts (small inputs only)."""
    best = float("inf")
    for where in itertools.product(range(hosts), repeat=len(jobs)):
        loads = [0.0] * hosts
        for job, h in zip(jobs, where):
            loads[h] += job.predicted_s
        best = min(best, max(loads))
    return best if jobs else 0.0


@given(jobs=job_lists, hosts=host_lists)
def test_every_layout_is_placed_exactly_once(jobs, hosts):
    shards = shard(jobs, hosts)
    placed = [j for s in shards for j in s.jobs]
    assert sorted(placed, key=lambda j: j.name) == sorted(jobs, key=lambda j: j.name)
    assert [s.host for s in shards] == hosts


@given(jobs=job_lists, hosts=host_lists)
def test_the_same_input_gives_the_same_plan_whatever_its_order(jobs, hosts):
    assert shard(jobs, hosts) == shard(list(reversed(jobs)), hosts) == shard(jobs, hosts)


@given(ts=st.lists(st.integers(0, 100), max_size=7), m=st.integers(1, 3))
def test_makespan_within_grahams_bound_of_the_optimum(ts, m):
    jobs = [Job(f"l{i}", float(t)) for i, t in enumerate(ts)]
    optimal = _optimal_s(jobs, m)
    assert makespan_s(shard(jobs, [f"h{i}" for i in range(m)])) <= (4 / 3 - 1 / (3 * m)) * optimal + 1e-9
    assert lower_bound_s(jobs, m) <= optimal + 1e-9


@given(jobs=job_lists, hosts=host_lists)
def test_makespan_is_never_below_the_lower_bound_nor_far_above_it(jobs, hosts):
    span, bound = makespan_s(shard(jobs, hosts)), lower_bound_s(jobs, len(hosts))
    assert bound - 1e-6 <= span <= 4 / 3 * bound + 1e-6 or span <= bound + max((j.predicted_s for j in jobs), default=0)


def test_a_known_case_is_split_as_lpt_does():
    jobs = [Job(n, t) for n, t in [("a", 7), ("b", 7), ("c", 6), ("d", 6), ("e", 5), ("f", 5), ("g", 4), ("h", 4),
                                   ("i", 4)]]
    shards = shard(jobs, ["x", "y", "z"])
    assert [[j.name for j in s.jobs] for s in shards] == [["a", "e", "g"], ["b", "f", "h"], ["c", "d", "i"]]
    assert makespan_s(shards) == 16 and lower_bound_s(jobs, 3) == 16


def test_grahams_worst_case_reaches_the_bound():
    # 2m+1 jobs 2m-1, 2m-1, 2m-2, 2m-2, ..., m, m, m: LPT takes 4m-1, the optimum 3m
    jobs = [Job(f"l{i}", t) for i, t in enumerate([5, 5, 4, 4, 3, 3, 3])]
    assert makespan_s(shard(jobs, ["x", "y", "z"])) == 11 and _optimal_s(jobs, 3) == 9   # 11/9 = 4/3 - 1/9


def test_bad_input_is_named():
    with pytest.raises(FleetError, match="host 'x' is named twice"):
        shard([Job("a", 1)], ["x", "x"])
    with pytest.raises(FleetError, match="job 'a' is listed twice"):
        shard([Job("a", 1), Job("a", 2)], ["x"])
    with pytest.raises(FleetError, match="no hosts"):
        shard([Job("a", 1)], [])
    with pytest.raises(FleetError, match="predicted_s=nan"):
        Job("a", float("nan"))
