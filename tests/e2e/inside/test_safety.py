"""The safety gate on the real kernel module: the two ways an audit saw bench destroy data
(both accepted by the gate before it sampled disks and proved leftovers by pool GUID), a
SIGKILL of zfslab alone, and zpool create right after a wipe on a busy host."""

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from zfslab.model.layout_grammar import parse_layout
from zfslab.system.disks import inspect_disk, read_samples
from zfslab.system.pool_safety import wipe_devices
from zfslab.system.runner import Runner
from tests.e2e.inside.disk_digest import disk_digest
from zfslab.system.zfs import ZfsCli

QUICK = ["--suite", "quick", "--size", "64m", "--runtime", "2", "--ramp", "0", "--repeats", "1"]
MIB = 1 << 20


def zfslab(*args, timeout=900):
    return subprocess.run([sys.executable, "-m", "zfslab", *args], capture_output=True, text=True, timeout=timeout)


def fresh(*disks):
    """Earlier tests leave pools' labels and data on the disks: make them read as empty."""
    wipe_devices(Runner(), list(disks))
    assert all(inspect_disk(d).safe for d in disks), [inspect_disk(d).reasons for d in disks]


digest = disk_digest  # the whole disk in seconds: zero chunks compared, the rest hashed


def wait_for(what, predicate, timeout_s=600):
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_a_wiped_header_with_data_behind_it_is_refused_and_left_unchanged(zfs, disks, tmp_path):
    victim, clean = disks[2], disks[3]
    fresh(victim, clean)
    block = os.urandom(MIB)
    with open(victim, "r+b") as f:  # no signature anywhere; someone's data from 16 MiB on
        f.seek(16 * MIB)
        for _ in range(128):  # 128 MiB: at least three of the 64 sampled regions of a 2 GiB disk
            f.write(block)
        f.flush()
        os.fsync(f.fileno())
    before = digest(victim)
    r = zfslab("bench", "--disks", f"{clean},{victim}", "--layouts", "mirror:2", *QUICK,
               "--db", str(tmp_path / "h.sqlite"))
    assert r.returncode == 10, r.stderr
    refused = [line for line in r.stderr.splitlines() if line.startswith("  ")]
    assert len(refused) == 1 and victim in refused[0] and "holds data of unknown kind" in refused[0]
    assert digest(victim) == before
    assert not zfs.pool_exists("zfslab-bench")
    fresh(victim)  # for the tests after this one


def zero_whole(dev):
    """Every byte zero (not only the sampled regions, as fresh() makes them): BLKZEROOUT, which
    qemu turns into holes in the disk's file (seconds), else written (minutes under TCG)."""
    if subprocess.run(["blkdiscard", "--zeroout", os.path.realpath(dev)], capture_output=True).returncode == 0:
        return
    block = bytes(16 * MIB)
    with open(dev, "r+b") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(0)
        for _ in range(size // len(block)):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())


def test_one_mib_of_data_between_the_old_samples_is_refused_by_bench_and_drill(zfs, disks, tmp_path):
    """Issue 26's audit: 1 MiB of random data at 768 MiB of a disk of zeros lay between the 64
    regions of 1 MiB the gate sampled then, and bench wrote over it."""
    victim, clean = disks[2], disks[3]
    fresh(victim, clean)
    zero_whole(victim)
    with open(victim, "r+b") as f:
        f.seek(768 * MIB)
        f.write(os.urandom(MIB))
        f.flush()
        os.fsync(f.fileno())
    # the whole disk, so a write anywhere (the island, a partition table, a pool's labels) is seen
    parts = lambda: digest(victim)  # noqa: E731
    before = parts()
    sample = read_samples(victim)
    print(f"sample of {victim}: {sample.sampled} of {sample.planned} regions of 4 KiB in {sample.seconds:.3f} s, "
          f"{sample.dirty} not zero")
    # its region is read in the fourth sweep (the 7th read): found early, and the read ends there
    assert sample.dirty == 1 and 768 * MIB <= sample.first_dirty < 769 * MIB and sample.sampled <= 9
    for args in (["bench", "--disks", f"{clean},{victim}", "--layouts", "mirror:2", *QUICK],
                 ["drill", "--disks", f"{clean},{victim}", "--layout", "mirror:2", "--dry-run"]):
        r = zfslab(*args, "--db", str(tmp_path / "i.sqlite"))
        assert r.returncode == 10, (args[0], r.stderr)
        refused = [line for line in r.stderr.splitlines() if line.startswith("  ")]
        assert len(refused) == 1 and victim in refused[0] and "holds data of unknown kind" in refused[0], r.stderr
        assert parts() == before
    assert not zfs.pool_exists("zfslab-bench")
    fresh(victim)  # for the tests after this one


def test_resume_never_wipes_a_pool_the_user_made_on_a_disk_of_the_run(zfs, disks, tmp_path):
    a, b = disks[4], disks[5]
    fresh(a, b)
    db = str(tmp_path / "r.sqlite")
    args = ["bench", "--disks", f"{a},{b}", "--layouts", "mirror:2", "--suite", "quick", "--size", "64m",
            "--runtime", "600", "--ramp", "0", "--repeats", "1", "--db", db]
    proc = subprocess.Popen([sys.executable, "-m", "zfslab", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    busy = lambda: subprocess.run(["pgrep", "-x", "fio"], capture_output=True).returncode == 0  # noqa: E731
    wait_for("fio at work on the run's pool", lambda: zfs.pool_exists("zfslab-bench") and busy())
    proc.send_signal(signal.SIGKILL)  # zfslab alone, not its process group: its fio must die with it
    proc.wait()
    wait_for("fio to end with zfslab", lambda: not busy(), timeout_s=60)
    guid = zfs.pool_guid("zfslab-bench")
    assert sqlite3.connect(db).execute("SELECT guid FROM pools").fetchall() == [(guid,)]

    # The user takes disk a back: destroys the leftover, makes a pool of their own, writes, exports.
    zfs.destroy_pool("zfslab-bench", force=True)
    zfs.create_pool("tank", parse_layout("disk"), [a], force=True)
    mnt = zfs.get("tank", "mountpoint")["mountpoint"].value
    with open(os.path.join(mnt, "photo.raw"), "wb") as f:
        f.write(os.urandom(4 * MIB))
    want = digest(os.path.join(mnt, "photo.raw"))
    zfs.export_pool("tank")
    before = digest(a)

    r = zfslab(*args)  # the same command again: a resume
    assert r.returncode == 10, r.stderr
    refused = [line for line in r.stderr.splitlines() if line.startswith("  ")]
    assert len(refused) == 1 and a in refused[0] and "'tank'" in refused[0], r.stderr
    assert digest(a) == before
    zfs.import_pool("tank")
    try:
        assert digest(os.path.join(mnt, "photo.raw")) == want
    finally:
        zfs.destroy_pool("tank", force=True)
    fresh(a, b)  # for the tests after this one


def test_a_kill_right_after_zpool_create_returned_is_resumed(zfs, disks, tmp_path):
    """Issue 26's window: zfslab killed (SIGKILL) the moment `zpool create` returned, before the
    pool's GUID was saved. A zpool on PATH runs the real one and, after a create, kills its
    parent (zfslab). The resume knows the pool by the create it recorded first (name and mark),
    records its GUID, destroys it and runs to the end."""
    a, b = disks[6], disks[7]
    fresh(a, b)
    db = str(tmp_path / "k.sqlite")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "zpool").write_text(f'#!/bin/sh\n{shutil.which("zpool")} "$@"; rc=$?\n'
                                   'if [ "$1" = create ] && [ $rc -eq 0 ]; then kill -KILL $PPID; fi\nexit $rc\n')
    (bin_dir / "zpool").chmod(0o755)
    args = ["bench", "--disks", f"{a},{b}", "--layouts", "mirror:2", *QUICK, "--db", db]
    r = subprocess.run([sys.executable, "-m", "zfslab", *args], capture_output=True, text=True, timeout=900,
                       env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert r.returncode == -signal.SIGKILL, r.stderr
    guid = zfs.pool_guid("zfslab-bench")
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT guid FROM pools").fetchall() == []  # the window: made, not recorded
    assert conn.execute("SELECT name, layout FROM pool_intents").fetchall() == [("zfslab-bench", "mirror:2")]
    conn.close()
    try:
        r = zfslab(*args)  # the same command again: a resume
        assert r.returncode == 0, r.stderr
        assert f"(GUID {guid}) is the one this run was creating" in r.stderr
        assert (guid,) in sqlite3.connect(db).execute("SELECT guid FROM pools").fetchall()
        assert not zfs.pool_exists("zfslab-bench")
    finally:
        if zfs.pool_exists("zfslab-bench"):
            zfs.destroy_pool("zfslab-bench", force=True)
        fresh(a, b)  # for the tests after this one


def test_zpool_create_right_after_a_wipe_on_a_busy_host(disks):
    """udev re-probes a disk after every change; zpool create racing it once failed in CI with
    'one or more devices is currently unavailable'. A busy core and a storm of change
    events on the same disks, a create right after each wipe: every create must succeed.
    One busy loop and three rounds: the guest is one host thread (docs/test-guest.md), so a loop
    takes the guest's CPU from everything else, and each round's wipe, change storm and create
    race udev as the first did."""
    used = disks[:3]
    notes: list[str] = []
    zfs = ZfsCli(log=notes.append)
    load = [subprocess.Popen([sys.executable, "-c", "while True: pass"])]
    try:
        for i in range(3):
            wipe_devices(Runner(), used)
            subprocess.run(["udevadm", "trigger", "--action=change", *[os.path.realpath(d) for d in used]],
                           check=True)
            zfs.create_pool("zfslab-e2e-udev", parse_layout("raidz1:3"), used)
            assert zfs.pool("zfslab-e2e-udev").health == "ONLINE"
            zfs.destroy_pool("zfslab-e2e-udev")
    finally:
        for p in load:
            p.kill()
            p.wait()
        if zfs.pool_exists("zfslab-e2e-udev"):
            zfs.destroy_pool("zfslab-e2e-udev", force=True)
        fresh(*used)  # for the tests after this one
    print(f"3 creates right after a wipe under load; retried after udev settled: {len(notes)}")
