"""The speed model: its properties, and its check on calomel's table."""

import json
import math
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import DATA
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout, VdevGroup, VdevKind
from zfslab.model.performance import (PRESETS, HostLimits, closed_loop_mb_s, layout_shape, predict, single_disk,
                                      streaming_mb_s)

HDD = PRESETS["hdd7200"]


def test_streaming_scales_with_data_disks():
    one = single_disk(HDD)
    assert predict(parse_layout("4xdisk"), HDD).write_mb_s == pytest.approx(4 * one.write_mb_s)
    assert predict(parse_layout("raidz2:6"), HDD).write_mb_s == pytest.approx(4 * one.write_mb_s)  # 128K fits 4 data disks
    assert predict(parse_layout("raidz2:8"), HDD).write_mb_s < 6 * one.write_mb_s  # padding: 128K on 6 data disks


def test_mirrors_write_like_one_disk_per_vdev_and_read_from_every_child():
    one = single_disk(HDD)
    m = predict(parse_layout("3xmirror:2"), HDD)
    assert m.write_mb_s == pytest.approx(3 * one.write_mb_s)
    assert m.read_mb_s == pytest.approx(6 * one.read_mb_s)


def test_random_reads_at_qd1_are_one_disk_and_raidz_is_one_disk_per_vdev_at_depth():
    for text in ("24xdisk", "raidz2:12", "12xmirror:2"):
        assert predict(parse_layout(text), HDD).rand_read_iops_qd1 == HDD.rand_read_iops_qd1
    rz = predict(parse_layout("2xraidz2:12"), HDD).rand_read_iops_qd8
    mirrors = predict(parse_layout("12xmirror:2"), HDD).rand_read_iops_qd8
    assert mirrors > 5 * rz


def test_host_ceilings():
    host = HostLimits(write_mb_s=700, read_mb_s=1800)
    p = predict(parse_layout("24xdisk"), HDD, host)
    assert p.write_mb_s == 700 and p.read_mb_s < 1800


def test_a_vdev_pipeline_caps_each_top_level_vdev_by_its_allocated_bytes():
    # raidz2:6 at ashift 12: 32 data sectors + 16 parity = 48 sectors for a 128 KiB record, so a
    # 1500 MB/s pipeline moves 1500 x 32/48 = 1000 MB/s of data per vdev; two vdevs move twice that
    host = HostLimits(vdev_pipeline_mb_s=1500)
    assert predict(parse_layout("raidz2:6"), HDD, host).write_mb_s == pytest.approx(4 * 220)  # the disks: 880
    ssd = PRESETS["ssd"]
    assert predict(parse_layout("raidz2:6"), ssd, host).write_mb_s == pytest.approx(1000)  # not the disks' 2000
    assert predict(parse_layout("2xraidz2:6"), ssd, host).write_mb_s == pytest.approx(2000)
    # a mirror moves every copy through its pipeline: 900 / 2 per vdev, below the disk's 500
    assert predict(parse_layout("3xmirror:2"), ssd, HostLimits(vdev_pipeline_mb_s=900)).write_mb_s == pytest.approx(3 * 450)


def test_child_ios_cost_each_vdev_and_parity_costs_the_host():
    ssd = PRESETS["ssd"]
    record = 128 * 1024
    # 10 us per child I/O: a 24-wide raidz1 spends 240 us of its pipeline per record
    p = predict(parse_layout("raidz1:24"), ssd, HostLimits(child_io_us=10))
    assert p.write_mb_s == pytest.approx(record / 240)
    # parity: 1/(1/C_w + p x t) for the whole pool, whatever the vdev count
    host = HostLimits(write_mb_s=2000, parity_us_per_mb=250)
    for text in ("raidz2:6", "2xraidz2:6", "4xraidz2:6"):
        assert predict(parse_layout(text), ssd, host).write_mb_s == pytest.approx(
            min(1 / (1 / 2000 + 2 * 250e-6), 4 * 500 * parse_layout(text).top_level_vdevs))


def test_reads_in_flight_go_from_series_to_the_slower_station():
    assert closed_loop_mb_s(300, 600, 1) == pytest.approx(1 / (1 / 300 + 1 / 600))
    # Q = 3 by hand: m (1 + u + u^2) / (1 + u + u^2 + u^3), u = 300/600
    assert closed_loop_mb_s(600, 300, 3) == pytest.approx(300 * 1.75 / 1.875)
    assert closed_loop_mb_s(300, 300, 2) == pytest.approx(200)  # equal stations: m Q / (Q + 1)
    assert closed_loop_mb_s(300, 600, 1e6) == pytest.approx(300)
    assert closed_loop_mb_s(300, math.inf, 1) == 300
    p = predict(parse_layout("12xdisk"), HDD, HostLimits(read_mb_s=1500, reads_in_flight=4))
    assert p.read_mb_s == pytest.approx(closed_loop_mb_s(12 * 220, 1500, 4))


def test_raidz_reads_draw_on_every_child_and_rewrite_never_beats_read_then_write():
    one = single_disk(HDD)
    assert predict(parse_layout("raidz2:6"), HDD).read_mb_s == pytest.approx(6 * one.read_mb_s)
    shape = layout_shape(parse_layout("raidz1:5"), 128 * 1024, 12)
    s = streaming_mb_s(shape, disk_write_mb_s=400, disk_read_mb_s=500, disk_rewrite_mb_s=1000, host_write_mb_s=1e9,
                       host_read_mb_s=1e9, reads_in_flight=1, rewrite_parallel=1.0, vdev_pipeline_mb_s=math.inf,
                       child_io_us=0, parity_us_per_mb=0)
    assert s.rewrite_mb_s == pytest.approx(1 / (1 / s.read_mb_s + 1 / s.write_mb_s))


def test_default_host_limits_keep_the_plain_model():
    host = HostLimits(write_mb_s=700)
    for text in ("24xdisk", "raidz2:8", "4xmirror:3", "draid2:8d:24c:1s"):
        layout = parse_layout(text)
        from zfslab.model.performance import data_disks
        assert predict(layout, HDD, host).write_mb_s == pytest.approx(min(data_disks(layout) * 220, 700))


@pytest.mark.parametrize("field,value,message", [
    ("vdev_pipeline_mb_s", 0, "vdev_pipeline_mb_s(=0) must be > 0"),
    ("child_io_us", -1, "child_io_us(=-1) must be a finite number >= 0"),
    ("parity_us_per_mb", math.nan, "parity_us_per_mb(=nan) must be a finite number >= 0"),
    ("reads_in_flight", 0.5, "reads_in_flight(=0.5) must be at least 1"),
])
def test_host_limits_refuse_unphysical_values(field, value, message):
    with pytest.raises(ValueError) as e:
        HostLimits(**{field: value})
    assert str(e.value) == message


def test_draid_speed():
    p = predict(parse_layout("draid2:8d:24c:1s"), HDD)
    assert p.rand_read_iops_qd8 == pytest.approx(2 * HDD.rand_read_iops_qd8)  # floor(23/10) groups
    assert p.write_mb_s < predict(parse_layout("24xdisk"), HDD).write_mb_s


groups = st.builds(
    lambda kind, width, parity, count: VdevGroup(kind, width, {VdevKind.MIRROR: width - 1}.get(kind, parity), count),
    st.sampled_from([VdevKind.MIRROR, VdevKind.RAIDZ]), st.integers(4, 16), st.integers(1, 3), st.integers(1, 4))


@given(g=groups, profile=st.sampled_from(list(PRESETS.values())))
def test_more_vdevs_never_slower_for_streaming(g, profile):
    more = VdevGroup(g.kind, g.width, g.parity, g.count + 1)
    a, b = predict(Layout((g,)), profile), predict(Layout((more,)), profile)
    assert b.write_mb_s >= a.write_mb_s and b.read_mb_s >= a.read_mb_s and b.rand_read_iops_qd8 >= a.rand_read_iops_qd8


@given(ways=st.integers(2, 4), count=st.integers(1, 12), profile=st.sampled_from(list(PRESETS.values())))
def test_a_mirror_never_writes_faster_than_one_disk_per_vdev(ways, count, profile):
    p = predict(Layout((VdevGroup(VdevKind.MIRROR, ways, ways - 1, count),)), profile)
    assert p.write_mb_s <= count * profile.seq_write_mb_s + 1e-9


@given(width=st.integers(4, 24), parity=st.integers(1, 3), profile=st.sampled_from(list(PRESETS.values())))
def test_more_parity_never_writes_faster(width, parity, profile):
    if width <= parity + 1:
        return
    a = predict(Layout((VdevGroup(VdevKind.RAIDZ, width, parity),)), profile)
    b = predict(Layout((VdevGroup(VdevKind.RAIDZ, width, min(parity + 1, 3)),)), profile)
    assert b.write_mb_s <= a.write_mb_s + 1e-9


def test_validate_on_calomel_meets_its_targets(run_cli):
    """Calibrated on the rows the design rule picks (9 of 26), judged on the other 17 (issue 15).

    calomel's pools were made at ashift 9: their printed capacities match the ashift-9
    allocation of capacity.py (raidz3:23 as 20.2 single disks, not 18.4).
    """
    r = run_cli("validate", os.path.join(DATA, "calomel-hdd-24x4tb.csv"), "--ashift", "9", "--calibration", "auto",
                "--json")
    out = json.loads(r.stdout)
    assert len(out["calibration_rows"]) == 9 and out["metrics"]["write"]["rows"] == 17
    targets = {"write": 8, "rewrite": 15, "read": 12}
    for m, target in targets.items():
        ours, rule = out["metrics"][m], out["baseline"][m]
        assert ours["median_ape_pct"] <= target and ours["median_ape_pct"] < rule["median_ape_pct"], m
        assert ours["spearman"] >= 0.8, m
    assert [row["index"] for row in out["rows"]] == list(range(26))
    assert set(out["rows"][0]["predicted"]) == {"write", "rewrite", "read"}


def test_validate_on_the_two_calibration_rows_of_the_csv(run_cli):
    """The CSV's own column still works: the single drive and the 24-disk stripe, no raidz row."""
    r = run_cli("validate", os.path.join(DATA, "calomel-calibrated.csv"), "--ashift", "9", "--json")
    out = json.loads(r.stdout)
    assert out["calibration_rows"] == [0, 25] and out["metrics"]["write"]["rows"] == 24
    for m in ("write", "rewrite", "read"):
        assert out["metrics"][m]["median_ape_pct"] < out["baseline"][m]["median_ape_pct"], m
    # nothing here pins the raidz costs: they stay at their priors
    pinned = {k: v["pinned_by"] for k, v in out["parameter_intervals"].items()}
    assert pinned["vdev_pipeline_mb_s"] == pinned["child_io_us"] == pinned["parity_us_per_mb"] == "prior"


@pytest.mark.parametrize("content,message", [
    ("disks,kind,vdevs,width,write_MBps,calibration\n4,raid5,1,4,100,1\n", "row 0: kind 'raid5'"),
    ("disks,kind,vdevs,width,write_MBps,calibration\n4,raidz1,1,3,100,1\n", "row 0: 1 vdevs x width 3 is 3 disks, but disks says 4"),
    ("disks,kind,vdevs,width,write_MBps,calibration\n4,raidz1,1,4,100,0\n", "no row has calibration=1"),
    ("disks,kind,vdevs,width,write_MBps,calibration\n4,raidz1,1,4,fast,1\n", "row 0: write_MBps 'fast' is not a number"),
    ("kind,vdevs,width\nstripe,1,1\n", "the dataset needs a column 'disks'"),
])
def test_validate_bad_datasets(run_cli, tmp_path, content, message):
    path = tmp_path / "d.csv"
    path.write_text(content)
    r = run_cli("validate", str(path))
    assert r.exit_code == 2 and message in r.stderr and r.stderr.count("\n") == 1


def test_plan_speed_columns_and_profile_files(run_cli, tmp_path):
    def layouts(stdout):
        out = json.loads(stdout)
        return out["layouts"] if isinstance(out, dict) else out
    rows = layouts(run_cli("plan", "8x12TB", "--json", "--disk-model", "ssd").stdout)
    row = next(r for r in rows if r["layout"] == "8xdisk")
    assert row["speed_x_single_disk"]["write_mb_s"] == pytest.approx(8.0)
    toml = tmp_path / "d.toml"
    toml.write_text('name = "mine"\nseq_read_mb_s = 100\nseq_write_mb_s = 90\nrand_read_iops_qd1 = 70\n'
                    'rand_read_iops_qd8 = 120\nrand_write_iops = 150\nsync_write_ms = 15\n')
    rows = layouts(run_cli("plan", "8x12TB", "--json", "--disk-model", str(toml)).stdout)
    assert next(r for r in rows if r["layout"] == "8xdisk")["speed"]["write_mb_s"] == pytest.approx(720)
    bad = run_cli("plan", "8x12TB", "--disk-model", str(tmp_path / "none.toml"))
    assert bad.exit_code == 2 and "no such file" in bad.stderr


def test_the_fit_s_vectorised_model_is_streaming_mb_s_term_for_term():
    """Issue 38: validate --loo evaluates model/streaming_table.py, many layouts and parameter
    sets at once; on every kind of vdev, mixed groups, an infinite host or pipeline and reads in
    series or fully pipelined, it gives what streaming_mb_s gives for one layout."""
    import numpy as np

    from zfslab.model.streaming_table import StreamingTable

    texts = ("disk", "24xdisk", "mirror:2", "12xmirror:2+spare:1", "raidz1:3", "raidz2:6", "2xraidz3:11", "raidz1:24",
             "draid2:8d:24c:1s", "raidz2:6+mirror:2", "2xraidz1:5+2xmirror:3")
    shapes = [layout_shape(parse_layout(t), 128 * 1024, ashift) for t in texts for ashift in (9, 12)]
    ceilings = [math.inf if i % 3 else 900.0 + 50 * i for i in range(len(shapes))]
    table = StreamingTable(shapes, ceilings)
    rng = np.random.default_rng(38)
    names = ("disk_write_mb_s", "disk_read_mb_s", "disk_rewrite_mb_s", "host_write_mb_s", "host_read_mb_s",
             "reads_in_flight", "rewrite_parallel", "vdev_pipeline_mb_s", "child_io_us", "parity_us_per_mb")
    sets = [dict(zip(names, np.exp(rng.uniform(np.log([50, 50, 20, 300, 300, 1, 0.01, 100, 0.01, 1]),
                                                np.log([3000, 3000, 1000, 1e5, 1e5, 100, 1, 1e5, 50, 1e4])))))
            for _ in range(30)]
    sets[0].update(host_write_mb_s=math.inf, host_read_mb_s=math.inf, vdev_pipeline_mb_s=math.inf, child_io_us=0.0)
    sets[1].update(reads_in_flight=1.0)
    sets[2].update(reads_in_flight=math.inf)
    sets[3].update(disk_read_mb_s=1500 / 6, host_read_mb_s=1500.0)  # disks and host equal on a 6-wide raidz2
    batched = table.streaming_mb_s(**{n: [s[n] for s in sets] for n in names})
    assert batched.shape == (len(sets), len(shapes), 3)
    for k, params in enumerate(sets):
        one = table.streaming_mb_s(**params)[0]
        for i, (shape, ceiling) in enumerate(zip(shapes, ceilings)):
            s = streaming_mb_s(shape, parity_ceiling_mb_s=ceiling, **params)
            expected = [s.write_mb_s, s.rewrite_mb_s, s.read_mb_s]
            assert list(batched[k, i]) == pytest.approx(expected, rel=1e-12), (k, i)
            assert list(one[i]) == pytest.approx(expected, rel=1e-12), (k, i)
