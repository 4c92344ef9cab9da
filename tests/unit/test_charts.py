"""The report's charts: a workload every layout shares is left out and said; the scatter's sizes have a key."""

from zfslab.model.plan import disk_set, plan
from zfslab.model.reliability.params import RiskParams
from zfslab.model.disk_types import DISK_TYPES
from zfslab.model.units import TB
from zfslab.report import charts


def _records(count=24):
    hdd = DISK_TYPES["hdd"]
    return [r.as_dict() for r in plan(disk_set(count, 4 * TB), speed=hdd.speed,
                                      risk=RiskParams(disk_bytes=4 * TB, years=(5,)))]


def test_a_workload_alike_for_every_layout_is_left_out_and_said():
    rows = _records()
    assert len({round(r["speed_x_single_disk"]["rand_read_iops_qd1"], 2) for r in rows}) == 1  # hdd: 1.0x for all
    svg = charts.relative_bars(rows, "svg").decode()
    assert "4K read QD8" in svg and ">4K read QD1<" not in svg.replace("\n", "")
    assert "Not drawn: 4K read QD1: every layout is 1.0× one disk" in svg
    one = rows[0]
    double = dict(one, layout="other", speed_x_single_disk={k: 2 * v for k, v in one["speed_x_single_disk"].items()})
    assert "Not drawn" not in charts.relative_bars([one, double], "svg").decode()  # every workload tells them apart


def test_the_scatters_marker_sizes_have_a_key():
    rows = _records()
    keys = charts.size_key([8.0, 24.0])
    assert keys == [8.0, 15.0, 25.0]
    svg = charts.corners(rows, {"4xraidz2:6"}, "svg", recommended="4xraidz2:6", horizon="5").decode()
    assert all(f"speed {v:g}× one disk" in svg for v in charts.size_key(
        [charts.math.prod(r["speed_x_single_disk"][k] for k in charts.GENERAL) ** (1 / 3) for r in rows]))
