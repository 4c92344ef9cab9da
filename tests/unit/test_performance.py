"""The speed model: its properties, and its check on calomel's table (calibrated on 2 rows)."""

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import DATA
from zfslab.model.layouts import Layout, VdevGroup, VdevKind, parse_layout
from zfslab.model.performance import PRESETS, HostLimits, predict, single_disk

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
    """Calibrated on the single drive and the 24-disk stripe only; judged on the other 24 rows."""
    r = run_cli("validate", os.path.join(DATA, "calomel-calibrated.csv"), "--ashift", "9", "--json")
    out = json.loads(r.stdout)
    ours = {m: out["metrics"][m]["median_ape_pct"] for m in ("write", "rewrite", "read")}
    rule = {m: out["baseline"][m]["median_ape_pct"] for m in ("write", "rewrite", "read")}
    assert out["metrics"]["write"]["rows"] == 24
    assert ours["rewrite"] <= 20 and ours["rewrite"] <= rule["rewrite"] / 2
    assert ours["read"] <= 15 and ours["read"] <= rule["read"] / 2
    # write: the model only matches the rule of thumb here (see issue note): it must not be worse
    assert ours["write"] <= rule["write"] + 0.1
    assert [row["index"] for row in out["rows"]] == list(range(26))
    assert set(out["rows"][0]["predicted"]) == {"write", "rewrite", "read"}


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
    rows = json.loads(run_cli("plan", "8x12TB", "--json", "--disk-model", "ssd").stdout)
    row = next(r for r in rows if r["layout"] == "8xdisk")
    assert row["speed_x_single_disk"]["write_mb_s"] == pytest.approx(8.0)
    toml = tmp_path / "d.toml"
    toml.write_text('name = "mine"\nseq_read_mb_s = 100\nseq_write_mb_s = 90\nrand_read_iops_qd1 = 70\n'
                    'rand_read_iops_qd8 = 120\nrand_write_iops = 150\nsync_write_ms = 15\n')
    rows = json.loads(run_cli("plan", "8x12TB", "--json", "--disk-model", str(toml)).stdout)
    assert next(r for r in rows if r["layout"] == "8xdisk")["speed"]["write_mb_s"] == pytest.approx(720)
    bad = run_cli("plan", "8x12TB", "--disk-model", str(tmp_path / "none.toml"))
    assert bad.exit_code == 2 and "no such file" in bad.stderr
