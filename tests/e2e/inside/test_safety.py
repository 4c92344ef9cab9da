"""The safety gate on the real kernel module: the two ways an audit saw bench destroy data
(both accepted by the gate before it sampled disks and proved leftovers by pool GUID), a
SIGKILL of zfslab alone, and zpool create right after a wipe on a busy host."""

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from zfslab.model.layout_grammar import parse_layout
from zfslab.system.bench import wipe_devices
from zfslab.system.disks import inspect_disk
from zfslab.system.runner import Runner
from zfslab.system.zfs import ZfsCli

QUICK = ["--suite", "quick", "--size", "64m", "--runtime", "2", "--ramp", "0", "--repeats", "1"]
MIB = 1 << 20


def zfslab(*args, timeout=900):
    return subprocess.run([sys.executable, "-m", "zfslab", *args], capture_output=True, text=True, timeout=timeout)


def fresh(*disks):
    """Earlier tests leave pools' labels and data on the disks: make them read as empty."""
    wipe_devices(Runner(), list(disks))
    assert all(inspect_disk(d).safe for d in disks), [inspect_disk(d).reasons for d in disks]


def digest(dev, start=0, length=None):
    h = hashlib.sha256()
    with open(dev, "rb") as f:
        f.seek(start)
        h.update(f.read(length) if length else f.read())
    return h.hexdigest()


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


def test_zpool_create_right_after_a_wipe_on_a_busy_host(disks):
    """udev re-probes a disk after every change; zpool create racing it once failed in CI with
    'one or more devices is currently unavailable'. Two busy cores and a storm of change
    events on the same disks, a create right after each wipe: every create must succeed."""
    used = disks[:3]
    notes: list[str] = []
    zfs = ZfsCli(log=notes.append)
    load = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        for i in range(5):
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
    print(f"5 creates right after a wipe under load; retried after udev settled: {len(notes)}")
