import pytest

from zfslab.errors import UsageError
from zfslab.model.performance import PRESETS
from zfslab.model.plan import disk_set, plan
from zfslab.model.recommend import dominates, frontier, loss_5y, recommend, speed_score
from zfslab.model.reliability.params import params_for_class
from zfslab.model.units import TB

ROWS = plan(disk_set(24, 4 * TB), risk=params_for_class("hdd", 4 * TB), speed=PRESETS["hdd7200"])


def test_frontier_members_are_not_dominated_and_the_rest_are():
    front = frontier(ROWS)
    names = {r.layout for r in front}
    assert "24xdisk" in names  # most space and speed
    for r in ROWS:
        dominated = any(dominates(o, r) for o in ROWS if o is not r)
        assert dominated == (r.layout not in names)


def test_each_priority_picks_the_best_on_its_corner():
    space = recommend(ROWS, "space")
    assert space.layout == "24xdisk"
    safety = recommend(ROWS, "safety")
    assert loss_5y(next(r for r in ROWS if r.layout == safety.layout)) == min(loss_5y(r) for r in ROWS)
    speed = recommend(ROWS, "speed")
    assert speed_score(next(r for r in ROWS if r.layout == speed.layout)) == max(speed_score(r) for r in ROWS)


def test_constraints_are_honoured():
    rec = recommend(ROWS, "safety", min_usable_bytes=60 * TB)
    row = next(r for r in ROWS if r.layout == rec.layout)
    assert row.usable_bytes >= 60 * TB
    assert "at least 60.00 TB usable" in rec.reason
    fast = recommend(ROWS, "speed", min_failures=2)
    row = next(r for r in ROWS if r.layout == fast.layout)
    assert row.failures_guaranteed >= 2 and "surviving 2 failed disks" in fast.reason
    assert rec.layout in rec.frontier


def test_balanced_names_the_trade_off():
    rec = recommend(ROWS, "balanced", min_failures=1)
    assert rec.reason.startswith(rec.layout) and "The trade-off:" in rec.reason


def test_impossible_constraints_say_what_is_possible():
    with pytest.raises(UsageError, match=r"no layout gives 200.00 TB and survives 0 failures; the most space is 95.18 TB \(24xdisk\)"):
        recommend(ROWS, "space", min_usable_bytes=200 * TB)
    with pytest.raises(UsageError, match="--priority fast"):
        recommend(ROWS, "fast")


def test_balanced_when_every_layout_is_certain_to_be_lost(run_cli):
    # --mtbf-hours 2: P(loss) = 1 everywhere made the safety share 0 / 0 (issue 19)
    r = run_cli("plan", "24x4TB", "--mtbf-hours", "2", "--min-failures", "2")
    assert r.exit_code == 0 and "Recommended for balanced" in r.stdout
