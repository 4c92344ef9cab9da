"""`zfslab bench` end to end with the real kernel module: a small run, a SIGKILL and resume,
the refusals of disks that hold data (left unchanged), and --wipe with the right serials."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from zfslab.model.layout_grammar import parse_layout
from zfslab.system.disks import inspect_disk
from tests.e2e.inside.disk_digest import disk_digest

QUICK = ["--suite", "quick", "--size", "64m", "--runtime", "2", "--ramp", "0"]


def zfslab(*args, check=True, timeout=900):
    p = subprocess.run([sys.executable, "-m", "zfslab", *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert p.returncode == 0, p.stderr[-3000:]
    return p


def fingerprint(dev):
    """The whole disk's contents (zero chunks compared, the rest hashed: seconds under TCG)."""
    return disk_digest(dev)


def test_a_small_run_of_two_layouts(zfs, disks, tmp_path):
    # two layouts, so that the run goes on from one to the next; each costs about a minute of TCG CPU
    db = str(tmp_path / "b.sqlite")
    t0 = time.monotonic()
    out = zfslab("bench", "--disks", ",".join(disks[:4]), "--layouts", "mirror:2,raidz2:4",
                 *QUICK, "--repeats", "1", "--db", db, "--json")
    result = json.loads(out.stdout)
    by = {(r["layout"], r["test"]): r for r in result["results"]}
    assert len(by) == 8
    for layout in ("mirror:2", "raidz2:4"):
        assert by[(layout, "seqwrite")]["write_mb_s"] > 0 and by[(layout, "seqread")]["read_mb_s"] > 0
        assert by[(layout, "randread-4k-t1q1")]["read_iops"] > 0 and by[(layout, "syncwrite-4k-t1q1")]["write_iops"] > 0
    assert not any(r["cache_suspect"] for r in result["results"])  # primarycache=metadata: reads hit the disks
    assert result["facts"]["zfs_version"] and result["facts"]["kernel"]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM measurements WHERE fio_json LIKE '%fio version%'").fetchone()[0] == 8
    assert conn.execute("SELECT COUNT(*) FROM measurements WHERE disk_read_mb > 0").fetchone()[0] >= 2
    assert conn.execute("SELECT finished_at FROM runs").fetchone()[0] is not None
    assert not zfs.pool_exists("zfslab-bench")
    assert all(inspect_disk(d).safe for d in disks[:4])  # wiped after each layout
    print(f"small run: {time.monotonic() - t0:.0f} s")
    print(out.stderr[-500:])


def test_sigkill_mid_test_then_resume_repeats_nothing(zfs, disks, tmp_path):
    db = str(tmp_path / "k.sqlite")
    # one layout: the kill and the resume are within it (a layout after it is the small run's path)
    args = [sys.executable, "-m", "zfslab", "bench", "--disks", ",".join(disks[:3]), "--layouts", "mirror:2",
            *QUICK, "--repeats", "1", "--db", db]
    proc = subprocess.Popen(args, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    # wait for two committed measurements and fio busy with the next: the third of mirror:2's four
    # tests, in the middle of the layout, its pool standing
    while time.monotonic() < deadline:
        if os.path.exists(db):
            try:
                n = sqlite3.connect(db).execute("SELECT COUNT(*) FROM measurements").fetchone()[0]
            except sqlite3.OperationalError:
                n = 0
            busy = subprocess.run(["pgrep", "-x", "fio"], capture_output=True).returncode == 0
            if n >= 2 and busy:
                break
        assert proc.poll() is None, "bench ended before it was killed"
        time.sleep(0.2)
    else:
        pytest.fail("bench made no progress")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {tuple(r[:3]): r[3] for r in sqlite3.connect(db).execute("SELECT layout, test, repeat, id FROM measurements")}
    assert zfs.pool_exists("zfslab-bench")  # killed in the middle of a layout
    again = zfslab("bench", "--disks", ",".join(disks[:3]), "--layouts", "mirror:2", *QUICK,
                   "--repeats", "1", "--db", db)
    assert "destroying pool zfslab-bench, left by an interrupted zfslab bench run" in again.stderr
    rows = sqlite3.connect(db).execute("SELECT layout, test, repeat, id FROM measurements").fetchall()
    assert len(rows) == 4 and len({tuple(r[:3]) for r in rows}) == 4
    assert {tuple(r[:3]): r[3] for r in rows if tuple(r[:3]) in before} == before
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1


def test_disks_holding_data_are_refused_and_left_unchanged(zfs, disks, tmp_path):
    ext4, gpt, label = disks[4], disks[5], disks[6]
    subprocess.run(["mkfs.ext4", "-q", "-F", ext4], check=True)
    subprocess.run(["sgdisk", "-o", gpt], check=True, capture_output=True)
    zfs.create_pool("zfslab-e2e-foreign", parse_layout("disk"), [label])
    zfs.export_pool("zfslab-e2e-foreign")
    before = {d: fingerprint(d) for d in (ext4, gpt, label)}
    r = zfslab("bench", "--disks", f"{disks[7]},{ext4},{gpt},{label}", "--layouts", "raidz1:4", *QUICK,
               "--repeats", "1", "--db", str(tmp_path / "x.sqlite"), check=False)
    assert r.returncode == 10, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("  ")]
    assert len(lines) == 3, r.stderr
    assert "ext4" in next(x for x in lines if ext4 in x)
    assert "gpt" in next(x for x in lines if gpt in x)
    assert "zfs_member" in next(x for x in lines if label in x)
    # the empty disk is not refused (it may still be named in a note, e.g. that smartctl is missing)
    assert not any(disks[7] in x for x in lines), r.stderr
    wrong = zfslab("bench", "--disks", f"{disks[7]},{ext4},{gpt},{label}", "--layouts", "raidz1:4", *QUICK,
                   "--repeats", "1", "--db", str(tmp_path / "x.sqlite"), "--wipe", "--confirm-serials", "NOPE",
                   check=False)
    assert wrong.returncode == 10 and "not confirmed" in wrong.stderr
    twice = zfslab("bench", "--disks", f"{disks[7]},{os.path.realpath(disks[7])}", "--layouts", "mirror:2",
                   "--dry-run", check=False)
    assert twice.returncode == 2 and "are the same disk" in twice.stderr
    assert {d: fingerprint(d) for d in (ext4, gpt, label)} == before
    assert not zfs.pool_exists("zfslab-bench")


def test_wipe_with_the_right_serials(zfs, disks, tmp_path):
    targets = [disks[4], disks[5], disks[6]]
    serials = [inspect_disk(d).serial for d in targets]
    r = zfslab("bench", "--disks", ",".join(targets), "--layouts", "raidz1:3", *QUICK, "--repeats", "1",
               "--db", str(tmp_path / "w.sqlite"), "--wipe", "--confirm-serials", ",".join(serials), "--json")
    assert len(json.loads(r.stdout)["results"]) == 4
    assert all(inspect_disk(d).safe for d in targets)


def test_suite_bonnie_runs_calomels_command_on_the_pool(zfs, disks, tmp_path):
    db = str(tmp_path / "bonnie.sqlite")
    t0 = time.monotonic()
    out = zfslab("bench", "--disks", ",".join(disks[:3]), "--layouts", "raidz1:3", "--suite", "bonnie",
                 "--size", "64m", "--repeats", "1", "--db", db, "--json")
    by = {r["test"]: r for r in json.loads(out.stdout)["results"]}
    assert set(by) == {"bonnie-write", "bonnie-rewrite", "bonnie-read"}
    assert by["bonnie-write"]["write_mb_s"] > 0  # fsync after every write: never "+++++" on a pool
    raw = sqlite3.connect(db).execute("SELECT DISTINCT fio_json FROM measurements").fetchall()
    assert len(raw) == 1 and raw[0][0].startswith("1.98,2.00a,") and ",64M," in raw[0][0]
    assert not zfs.pool_exists("zfslab-bench")
    rates = {t: r["write_mb_s"] or r["read_mb_s"] for t, r in by.items()}  # None: bonnie++ printed +++++
    print(f"bonnie++ on raidz1:3: {time.monotonic() - t0:.0f} s; " +
          ", ".join(f"{t} {'too fast to time' if v is None else f'{v:.1f} MB/s'}" for t, v in rates.items()))


def test_calibration_layouts_then_plan_fits_on_them(zfs, disks, tmp_path):
    # issue 15: measure the few layouts the design picks, then plan learns the rest from them
    # (functional only: TCG speeds are no benchmark)
    db = str(tmp_path / "cal.sqlite")
    dry = zfslab("bench", "--disks", ",".join(disks[:4]), "--layouts", "calibration", "--suite", "seq",
                 "--size", "64m", "--repeats", "1", "--db", db, "--dry-run", "--json")
    picked = [c["layout"] for c in json.loads(dry.stdout)["calibration"]]
    assert 2 <= len(picked) <= 3  # at most a third of the 8 layouts plan lists for 4 disks
    assert not os.path.exists(db)
    zfslab("bench", "--disks", ",".join(disks[:4]), "--layouts", "calibration", "--suite", "seq",
           "--size", "64m", "--repeats", "1", "--db", db)
    data = json.loads(zfslab("plan", "--db", db, "--json").stdout)
    assert data["disk_count"] == 4
    assert sorted(data["speed_fit"]["layouts_measured"]) == sorted(picked)
    rows = {r["layout"]: r for r in data["layouts"]}
    for name in picked:
        assert rows[name]["measured"] and rows[name]["measured_write_mb_s"] > 0
    others = [r for n, r in rows.items() if n not in picked]
    assert others and all(not r["measured"] and r["write_mb_s_low"] <= r["speed"]["write_mb_s"] <= r["write_mb_s_high"]
                          for r in others)
    table = zfslab("plan", "--db", db).stdout
    assert f"speed fitted on {len(picked)} measured layouts" in " ".join(table.split())  # the short footer
    table = zfslab("plan", "--db", db, "--explain").stdout
    assert f"fitted on {len(picked)} layouts measured on these disks" in " ".join(table.split())
    assert not zfs.pool_exists("zfslab-bench")
