"""`zfslab drill` on the real kernel module: every scenario on a mirror, raidz3 and dRAID."""

import json
import sqlite3
import subprocess
import sys

import pytest

from zfslab.model.layout_grammar import parse_layout

# One of each kind the drill handles: a mirror, a raidz (raidz3: the drill fails disks up to the
# parity, three steps here, and raidz1's one step is the mirror's and dRAID1's), and a dRAID
# (its distributed spare). raidz1:3 and raidz2 cost a guest's CPU for no path these lack
# (docs/test-guest.md#time-in-ci)
LAYOUTS = ["mirror:2", "raidz3:5", "draid1:2d:5c:1s"]


def zfslab(*args, check=True):
    p = subprocess.run([sys.executable, "-m", "zfslab", *args], capture_output=True, text=True, timeout=1800)
    if check:
        assert p.returncode == 0, p.stderr[-3000:]
    return p


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_scenario(zfs, disks, tmp_path, layout):
    lay = parse_layout(layout)
    used, spare = disks[:lay.disks], disks[lay.disks]
    db = str(tmp_path / "d.sqlite")
    r = zfslab("drill", "--disks", ",".join(used), "--spare-disk", spare, "--layout", layout, "--fill", "0.05",
               "--db", db, "--json", "--wipe", "--confirm-serials",
               ",".join(f"ZFSLAB{i:04d}" for i in range(8)), *(["--sequential-rebuild"] if layout == "mirror:2" else []))
    out = json.loads(r.stdout)
    by = {s["scenario"]: s for s in out["scenarios"]}
    p = lay.groups[0].parity
    assert by["degraded"]["outcome"] == "survived"
    assert [s["failed"] for s in by["degraded"]["steps"]] == list(range(1, p + 1))
    assert all(s["verified"] and s["pool_state"] == "DEGRADED" for s in by["degraded"]["steps"])
    assert all(s["read_mb_s"] > 0 and s["write_mb_s"] > 0 for s in by["degraded"]["steps"])
    # one disk more than the parity: ZFS itself refuses, and the drill reports its words
    assert "no valid replicas" in by["degraded"]["beyond_parity"]["zfs_refused"]
    assert by["resilver"]["outcome"] == "survived" and by["resilver"]["resilvered_bytes"] > 0
    if layout == "mirror:2":  # asked for: `replace -s` back onto the first disk, timed
        assert by["resilver"]["sequential"]["written_bytes"] > 0, by["resilver"]
    assert by["corrupt"]["outcome"] == "repaired", by["corrupt"]
    assert sum(by["corrupt"]["cksum"].values()) > 0 and by["corrupt"]["repaired_bytes"] > 0
    assert by["corrupt"]["verified"]
    beyond = by["corrupt-beyond-parity"]
    assert beyond["outcome"] == "damaged" and (beyond["damaged_files"] or not beyond["verified"]), beyond
    assert out["verdict"].startswith(f"{layout} at 5 % full: survived {p} failed disk")
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT scenario, outcome FROM drills").fetchall()
    assert len(rows) == 4
    # each timed resilver as plan --db reads it: the vdev kind, the fill, ZFS's bytes, the disks by serial
    timed = conn.execute("SELECT id, vdev_kind, how, fill, fill_bytes, resilvered_bytes, seconds FROM resilvers "
                         "ORDER BY id").fetchall()
    assert [t[1:4] for t in timed][:1] == [(lay.groups[0].kind.value, by["resilver"]["how"], 0.05)]
    assert len(timed) == (2 if layout == "mirror:2" else 1)
    assert timed[0][5] == by["resilver"]["resilvered_bytes"] and timed[0][4] > 0 and timed[0][6] > 0
    serials = conn.execute("SELECT serial, role FROM resilver_disks WHERE resilver_id = ? ORDER BY position",
                           (timed[0][0],)).fetchall()
    assert [r for _, r in serials] == ["pool"] * lay.disks + ["spare"]
    assert all(s and s.startswith("ZFSLAB") for s, _ in serials), serials
    assert not zfs.pool_exists("zfslab-drill")
    print(out["verdict"], {s["scenario"]: round(s["seconds"], 1) for s in out["scenarios"]})


def test_read_only_health_report(zfs, disks, pool_name):
    zfs.create_pool(pool_name, parse_layout("mirror:2"), disks[:2])
    first = zfslab("drill", "--pool", pool_name, "--read-only", "--json", check=False)
    assert first.returncode == 1 and "never scrubbed" in json.loads(first.stdout)["problems"]
    zfs.scrub(pool_name, wait=True)
    second = zfslab("drill", "--pool", pool_name, "--read-only")
    assert "healthy (ONLINE)" in second.stdout
    refused = zfslab("drill", "--pool", pool_name, check=False)
    assert refused.returncode == 2 and "--pool works only with --read-only" in refused.stderr
    zfs.destroy_pool(pool_name)


def test_one_disk_failed_in_each_of_two_vdevs(zfs, disks, tmp_path):
    r = zfslab("drill", "--disks", ",".join(disks[:4]), "--layout", "2xmirror:2", "--scenarios", "degraded",
               "--fill", "0.05", "--db", str(tmp_path / "x.sqlite"), "--json", "--wipe", "--confirm-serials",
               ",".join(f"ZFSLAB{i:04d}" for i in range(8)))
    degraded = json.loads(r.stdout)["scenarios"][0]
    across = degraded["across_vdevs"]
    assert degraded["outcome"] == "survived"
    assert len(across["failed"]) == 2 and across["verified"] and across["read_mb_s"] > 0
    assert not zfs.pool_exists("zfslab-drill")
