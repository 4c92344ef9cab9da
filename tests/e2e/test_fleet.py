"""A fleet of two storage servers: two test guests (real OpenZFS 2.4 module under TCG), reached from
the host only by ssh through qemu user-networking forwards on 127.0.0.1 (issue 27; guests:
tests/e2e/guest/fleet.py, docs/test-guest.md#the-fleet-guests; design: docs/fleet.md).

Needs root and qemu; skipped otherwise, unless ZFSLAB_TEST_REQUIRE_E2E=1, when a skip fails. The
guests boot in the background when collection ends, after the 2.3 guest's suite when that runs
too (tests/e2e/test_guest.py start_guest_suites), and the tests share them: a test that needs a
host to die kills it and boots it again on the same disks before it ends.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.guest import fleet as fleet_guests
from tests.e2e.guest import guest
from tests.e2e.test_guest import _need_guest, start_guest_suites
from zfslab import __version__
from zfslab.model.inventory import Host
from zfslab.store.fleet_state import state_path
from zfslab.system.preflight import preflight
from zfslab.system.transport import SshTransport

pytestmark = pytest.mark.e2e

A, B = "fleet-a", "fleet-b"
HOSTS = f"{A},{B}"
SPECS = fleet_guests.fleet_specs()
# The same by-id paths on both hosts (the same serials). The first three are plain 2 GiB disks;
# the fourth is throttled on fleet-a (the outlier), the fifth is larger on fleet-b (the refusal)
DISKS = [fleet_guests.by_id(d) for d in SPECS[A]]
BENCH_DISKS = ",".join(DISKS[:3])
QUICK = ["--suite", "quick", "--size", "64m", "--runtime", "2", "--ramp", "0", "--repeats", "1"]
QUICK_TESTS = {"seqwrite", "seqread", "randread-4k-t1q1", "syncwrite-4k-t1q1"}
SPLIT_LAYOUTS = ["mirror:2", "2xdisk", "raidz1:3", "3xdisk"]
# two a host: each layout is about a minute of a TCG guest's CPU, and the kill needs only one under way
KILL_LAYOUTS = ["mirror:2", "2xdisk", "3xdisk", "raidz1:3"]
# the controller runs the checkout the guests mount (this one, or $ZFSLAB_GUEST_REPO): one zfslab version
CONTROLLER_SRC = str(guest.repo_to_mount() / "src")


@pytest.fixture(scope="module")
def fleet():
    """The two guests, answering ssh (booted in the background since collection ended)."""
    _need_guest()
    t0 = time.monotonic()
    running = start_guest_suites(suites=False, fleet=True)["fleet"].result()
    print(f"fleet ready after a wait of {time.monotonic() - t0:.0f} s; boot to ssh: "
          + ", ".join(f"{g.name} {g.ready_s[0]:.0f} s" for g in running.guests.values()))
    yield running
    results = running.close()
    for name, result in results.items():
        print(f"{name}: stopped, payload rc={None if result is None else result.returncode}")


def zfslab(*args: str, timeout_s: float = 3600) -> subprocess.CompletedProcess:
    """The controller, run on the host from the checkout the guests mount."""
    env = dict(os.environ, PYTHONPATH=CONTROLLER_SRC)
    return subprocess.run([sys.executable, "-m", "zfslab", *args], capture_output=True, text=True, env=env,
                          timeout=timeout_s, stdin=subprocess.DEVNULL)


def fleet_args(fleet) -> list[str]:
    return ["--hosts", HOSTS, "--ssh-config", str(fleet.ssh_config)]


def no_pools(fleet, name: str) -> None:
    """Nothing imported, and nothing importable from the disks either (no pool left behind)."""
    assert fleet.ssh(name, "zpool list -H").stdout == ""
    scan = fleet.ssh(name, "zpool import -d /dev/disk/by-id", check=False)
    assert "pool:" not in scan.stdout, scan.stdout


def counts(db: Path) -> dict[tuple[str, str], int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {(layout, test): n for layout, test, n in
                conn.execute("SELECT layout, test, COUNT(*) FROM measurements GROUP BY layout, test")}
    finally:
        conn.close()


def twice(db: Path) -> list[tuple]:
    """The measurements of a (layout, test) counted more than once, with the run and host of each."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return list(conn.execute(
            "SELECT m.layout, m.test, m.repeat, r.id, r.origin, r.uid, m.started_at FROM measurements m "
            "JOIN runs r ON r.id = m.run_id WHERE (m.layout, m.test) IN "
            "(SELECT layout, test FROM measurements GROUP BY layout, test HAVING COUNT(*) > 1) ORDER BY 1, 2, 7"))
    finally:
        conn.close()


def origins(db: Path) -> dict[str, set[str]]:
    """Each layout's hosts, from the runs its measurements belong to."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out: dict[str, set[str]] = {}
        for layout, origin in conn.execute("SELECT DISTINCT m.layout, r.origin FROM measurements m "
                                           "JOIN runs r ON r.id = m.run_id"):
            out.setdefault(layout, set()).add(origin)
        return out
    finally:
        conn.close()


def test_preflight_over_ssh_passes_twins_and_names_each_refusal(fleet, record_property):
    t0 = time.monotonic()
    transport = SshTransport(config_file=str(fleet.ssh_config))
    hosts = [Host(A, A), Host(B, B)]
    try:
        facts, lines = preflight(transport, hosts, DISKS[:4], controller_version=__version__)
        assert lines == []
        assert [f.host for f in facts] == [A, B]
        assert all(f.zfslab_version == __version__ and f.zfs_version.startswith("zfs-2.4") and f.fio_version
                   for f in facts), facts
        assert [d.serial for d in facts[0].disks] == [d.serial for d in SPECS[A][:4]]
        assert [d.kind for d in facts[0].disks] == [d.kind for d in facts[1].disks]

        # the fifth disk is 3 GiB on fleet-b, 2 GiB on fleet-a: one line naming the host and the difference
        _, lines = preflight(transport, hosts, DISKS, controller_version=__version__)
        assert len(lines) == 1, lines
        assert re.fullmatch(rf"{B}: /dev/sd[a-z]+ differs from {A}'s disks: size 3,221,225,472 bytes, "
                            r"not 2,147,483,648 bytes", lines[0]), lines

        # a host nothing answers for: one line, and the other host's facts still read
        gone = Host("gone", "127.0.0.1", port=fleet_guests.free_port())
        facts, lines = preflight(transport, [hosts[0], gone], DISKS[:4], controller_version=__version__)
        assert [f.host for f in facts] == [A]
        assert len(lines) == 1 and re.match(r"host gone: cannot connect \(.*Connection refused", lines[0]), lines

        # another zfslab on fleet-b: its wrapper points at a copy of the source with another version
        fleet.ssh(B, "set -e; rm -rf /root/zfslab-other; mkdir /root/zfslab-other; "
                     "cp -a /mnt/repo/src/zfslab /root/zfslab-other/; "
                     "sed -i 's/^__version__ = .*/__version__ = \"0.0.0+other\"/' /root/zfslab-other/zfslab/__init__.py; "
                     "cp /usr/local/bin/zfslab /root/zfslab.orig; "
                     "sed -i 's#PYTHONPATH=/mnt/repo/src#PYTHONPATH=/root/zfslab-other#' /usr/local/bin/zfslab")
        try:
            _, lines = preflight(transport, hosts, DISKS[:4], controller_version=__version__)
        finally:
            fleet.ssh(B, "cp /root/zfslab.orig /usr/local/bin/zfslab && rm -rf /root/zfslab-other /root/zfslab.orig")
        assert lines == [f"{B}: zfslab 0.0.0+other, the controller runs {__version__}; install zfslab {__version__} "
                         f"on it (pip install zfslab=={__version__})"], lines
        assert fleet.ssh(B, "zfslab --version").stdout.strip() == f"zfslab {__version__}"
    finally:
        transport.close()
    record_property("seconds", round(time.monotonic() - t0))


def remote_state(fleet, name: str) -> dict[str, str]:
    """What a run would change on a host: files newer than the mark (every filesystem a run could
    write to), the disks' first and last 8 MiB, and the pools."""
    script = ("find / /tmp /run /var/tmp /root -xdev -newer /run/zfslab-mark ! -path /run/zfslab-mark "
              "-printf '%p\\n' 2>/dev/null | sort -u; "
              + "".join(f"echo {d}; head -c 8M {d} | sha256sum; tail -c 8M {d} | sha256sum; " for d in DISKS)
              + "zpool list -H")
    return {"state": fleet.ssh(name, script, timeout_s=300).stdout}


def test_dry_run_writes_nothing_on_any_host_nor_here(fleet, tmp_path, record_property):
    for name in (A, B):
        fleet.ssh(name, "touch /run/zfslab-mark")
    before = {name: remote_state(fleet, name) for name in (A, B)}
    here = tmp_path / "controller"
    here.mkdir()
    t0 = time.monotonic()
    out = zfslab("bench", *fleet_args(fleet), "--disks", BENCH_DISKS, "--layouts", ",".join(SPLIT_LAYOUTS), *QUICK,
                 "--db", str(here / "all.sqlite"), "--dry-run")
    record_property("seconds", round(time.monotonic() - t0))
    assert out.returncode == 0, out.stderr[-3000:]
    assert A in out.stdout and B in out.stdout, out.stdout   # the plan of each host
    assert all(layout in out.stdout for layout in SPLIT_LAYOUTS), out.stdout
    assert list(here.iterdir()) == []
    after = {name: remote_state(fleet, name) for name in (A, B)}
    assert after == before


def test_a_refusal_at_preflight_starts_nothing(fleet, tmp_path):
    # the CLI's own preflight, before anything is written: the fifth disk differs on fleet-b
    out = zfslab("bench", *fleet_args(fleet), "--disks", ",".join(DISKS), "--layouts", "mirror:2", *QUICK,
                 "--db", str(tmp_path / "all.sqlite"))
    assert out.returncode not in (0, 1), out.stderr[-3000:]
    assert re.search(rf"{B}: /dev/sd[a-z]+ differs from {A}'s disks: size 3,221,225,472 bytes", out.stderr), out.stderr
    assert not (tmp_path / "all.sqlite").exists()
    for name in (A, B):
        no_pools(fleet, name)


def test_bench_split_over_two_hosts_then_plan_on_the_merged_db(fleet, tmp_path, record_property):
    db = tmp_path / "all.sqlite"
    t0 = time.monotonic()
    out = zfslab("bench", *fleet_args(fleet), "--disks", BENCH_DISKS, "--layouts", ",".join(SPLIT_LAYOUTS),
                 *QUICK, "--db", str(db))
    seconds = time.monotonic() - t0
    record_property("seconds", round(seconds))
    assert out.returncode == 0, out.stderr[-3000:]
    assert counts(db) == {(layout, test): 1 for layout in SPLIT_LAYOUTS for test in QUICK_TESTS}, twice(db)
    by_layout = origins(db)
    assert all(len(hosts) == 1 for hosts in by_layout.values()), by_layout   # each layout measured once, by one host
    assert {h for hosts in by_layout.values() for h in hosts} == {A, B}      # and the work was split
    for name in (A, B):
        no_pools(fleet, name)
    plan = zfslab("plan", "--db", str(db))
    assert plan.returncode == 0, plan.stderr[-3000:]
    assert re.search(r"\b2 hosts\b", " ".join(plan.stdout.split())), plan.stdout
    print(f"split run of {len(SPLIT_LAYOUTS)} layouts over 2 hosts: {seconds:.0f} s")


def _detach(args: list[str]) -> str:
    """Start a detached run from a controller in a session of its own, SIGKILLed whole once it
    returned (nothing of it is left to lean on); the run's id."""
    controller = subprocess.Popen([sys.executable, "-m", "zfslab", *args, "--detach"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=CONTROLLER_SRC),
                                  stdin=subprocess.DEVNULL, start_new_session=True)
    out, err = controller.communicate(timeout=1800)
    try:
        os.killpg(controller.pid, 9)
    except ProcessLookupError:
        pass
    assert controller.returncode == 0, err[-3000:]
    return re.search(r"detached run (\S+):", out)[1]


def test_a_detached_run_outlives_its_controller_and_a_host_rebooted_mid_run_resumes(fleet, tmp_path, record_property):
    """issue 36 item 1 on the two guests: a detached run whose controller is gone; fleet-b's power
    cut while fio runs on its pool, then booted again; --status says which host rebooted; --attach
    (a new controller) follows fleet-a to its end and pulls it; the same command with --resume
    --detach, followed by --attach, finishes: every (layout, test) once, no pool, no process."""
    db = tmp_path / "all.sqlite"
    args = ["bench", *fleet_args(fleet), "--disks", BENCH_DISKS, "--layouts", ",".join(KILL_LAYOUTS), *QUICK,
            "--db", str(db)]
    verb = ["bench", "--db", str(db), "--ssh-config", str(fleet.ssh_config)]
    t0 = time.monotonic()
    run = _detach(args)
    started = time.monotonic() - t0
    try:
        deadline = time.monotonic() + 1800   # fleet-b's run under way: fio on its pool (ssh alone: a look
        # through zfslab costs a Python start in the guest, seconds under TCG, and missed every fio once)
        record = json.loads(Path(state_path(str(db), run)).read_text())
        prefix = next(h["prefix"] for h in record["hosts"] if h["name"] == B)
        look = (f"test -e {shlex.quote(prefix)}.exit && exit 7; "   # it ended first: say so, not wait 30 min
                "zpool list -H zfslab-bench >/dev/null 2>&1 && pgrep -x fio")
        while (seen := fleet.ssh(B, look, check=False).returncode) != 0:
            assert seen != 7, "fleet-b's run ended before fio was seen running there"
            assert time.monotonic() < deadline, "fio never ran on fleet-b"
        fleet.kill(B)
        killed_at = time.monotonic() - t0
    finally:
        if not fleet.guests[B].running.alive():   # the next tests need it, whatever happened here
            fleet.start(B)
            fleet.wait_ready(B)
    status = zfslab(*verb, "--status", run, "--json")
    assert status.returncode == 4, status.stderr[-3000:]
    hosts = {h["host"]: h for h in json.loads(status.stdout)["hosts"]}
    assert hosts[B]["started"] and hosts[B]["rebooted"] and not hosts[B]["running"], hosts[B]
    assert hosts[B]["exit_code"] is None and not hosts[A]["rebooted"], hosts
    attached = zfslab(*verb, "--attach", run, "--interval", "5")
    print(attached.stdout)
    assert attached.returncode == 4, attached.stderr[-3000:]   # fleet-b did not finish
    # fio ran in fleet-b's first layout or its second when the power was cut
    cut = re.search(rf"{B}: ([01]) of 2 layouts done, ended without finishing: the host rebooted during the run",
                    attached.stdout)
    assert cut, attached.stdout
    assert f"{A}: 2 of 2 layouts done, ended, exit 0" in attached.stdout
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:   # what the attach pulled: fleet-a's part and fleet-b's finished layouts (its cut one unfinished)
        finished = dict(conn.execute("SELECT origin, COUNT(*) FROM runs WHERE finished_at IS NOT NULL GROUP BY origin"))
    finally:
        conn.close()
    assert finished.get(A) == 2 and finished.get(B, 0) == int(cut[1]), finished

    resumed_at = time.monotonic()
    run2 = _detach([*args, "--resume"])   # fleet-b's pool was imported at boot: it takes that layout back first
    attached = zfslab(*verb, "--attach", run2, "--interval", "5")
    print(attached.stdout)
    assert attached.returncode == 0, attached.stderr[-3000:]
    assert counts(db) == {(layout, test): 1 for layout in KILL_LAYOUTS for test in QUICK_TESTS}, twice(db)
    assert {h for hosts in origins(db).values() for h in hosts} == {A, B}
    assert zfslab(*verb, "--collect", run2).returncode == 0 and counts(db) == {
        (layout, test): 1 for layout in KILL_LAYOUTS for test in QUICK_TESTS}   # again: nothing twice
    for name in (A, B):
        no_pools(fleet, name)
        left = fleet.ssh(name, f"pgrep -f '[z]fslab bench'; pgrep -x fio; systemctl is-active zfslab-bench-{run2}",
                         check=False)
        assert "active" not in left.stdout.replace("inactive", ""), left.stdout
        assert not re.search(r"^[0-9]+$", left.stdout, re.M), left.stdout
    record_property("seconds", round(time.monotonic() - t0))
    print(f"detached run of {len(KILL_LAYOUTS)} layouts: the controller returned in {started:.0f} s; fleet-b cut "
          f"{killed_at:.0f} s in; fleet-b ssh-ready {fleet.guests[B].ready_s[-1]:.0f} s after its second boot; "
          f"the resume, detached and attached to, took {time.monotonic() - resumed_at:.0f} s; "
          f"{time.monotonic() - t0:.0f} s in all")


def test_a_host_killed_mid_run_resumes_after_it_boots_again(fleet, tmp_path, record_property):
    db = tmp_path / "all.sqlite"
    args = ["bench", *fleet_args(fleet), "--disks", BENCH_DISKS, "--layouts", ",".join(KILL_LAYOUTS), *QUICK,
            "--db", str(db)]
    env = dict(os.environ, PYTHONPATH=CONTROLLER_SRC)
    t0 = time.monotonic()
    controller = subprocess.Popen([sys.executable, "-m", "zfslab", *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env, stdin=subprocess.DEVNULL)
    try:
        # fleet-b's shard under way: fio runs there on its pool (not preflight's `fio --version`, which a
        # look once caught). Between looks, wait on the controller (it must not end first)
        deadline = time.monotonic() + 1800
        while fleet.ssh(B, "zpool list -H zfslab-bench >/dev/null 2>&1 && pgrep -x fio", check=False).returncode != 0:
            assert time.monotonic() < deadline, "fio never ran on fleet-b"
            try:
                controller.wait(timeout=2)
            except subprocess.TimeoutExpired:
                continue
            pytest.fail(f"the run ended before fleet-b was killed:\n{controller.stderr.read()[-3000:]}")
        fleet.kill(B)
        killed_at = time.monotonic() - t0
        out, err = controller.communicate(timeout=3600)
    finally:
        if controller.poll() is None:
            controller.kill()
            controller.wait()
        if not fleet.guests[B].running.alive():   # the next tests need it, whatever happened here
            fleet.start(B)
            fleet.wait_ready(B)
    first = time.monotonic() - t0
    assert controller.returncode not in (0, 1), err[-3000:]   # not done, and no traceback
    assert B in err, err[-3000:]
    done_by = origins(db) if db.exists() else {}
    assert A in {h for hosts in done_by.values() for h in hosts}, (done_by, err[-3000:])   # fleet-a finished its part

    # the host came back (above) on the same disks and root filesystem; the same command resumes
    ready = fleet.guests[B].ready_s[-1]
    t1 = time.monotonic()
    again = zfslab(*args, "--resume")
    resumed = time.monotonic() - t1
    assert again.returncode == 0, again.stderr[-3000:]
    assert counts(db) == {(layout, test): 1 for layout in KILL_LAYOUTS for test in QUICK_TESTS}, twice(db)   # none lost, none twice
    assert set(origins(db)) == set(KILL_LAYOUTS)
    for name in (A, B):
        no_pools(fleet, name)
    record_property("seconds", round(time.monotonic() - t0))
    print(f"killed fleet-b {killed_at:.0f} s in; first run ended at {first:.0f} s; fleet-b ssh-ready {ready:.0f} s "
          f"after its second boot; --resume took {resumed:.0f} s")


def test_profile_disk_over_the_fleet_flags_the_throttled_disk(fleet, record_property):
    t0 = time.monotonic()
    # Under TCG, 2-s figures of identical, unthrottled peers scatter widely: one read 142 MB/s
    # against its peers' median of 248 (43 % below) in the CI run of 2026-11-26, beyond the default
    # 15 % that suits real disks; the default's own rule is tested in tests/unit. The throttled disk
    # (4 MB/s, 50 IOPS) sits 93-98 % below, so an 80 % bar flags it. A peer can fall past the bar too
    # when its guest is starved: with the fleet's tests beside the two 2.4 boots (a CI-like run of
    # 2026-11-28, five guests on two cores) fleet-a's first disk read 11 MB/s against a median of 64
    # (83 % below). Speed in the emulator is no benchmark (docs/test-guest.md#throughput-there-means-nothing),
    # so such a peer is printed, not failed; the throttled disk must be flagged, and furthest below.
    out = zfslab("profile-disk", *fleet_args(fleet), "--disks", ",".join(DISKS[:4]), "--seconds", "2",
                 "--threshold", "80%", "--json")
    record_property("seconds", round(time.monotonic() - t0))
    assert out.returncode == 0, out.stderr[-3000:]
    found = json.loads(out.stdout)["outliers"]
    outliers = [json.dumps(o) for o in found]
    # fleet-a's fourth disk, named by the path given or its serial (its /dev/sdX changes from boot to boot)
    throttled = [o for o, text in zip(found, outliers) if A in text and (DISKS[3] in text or "ZFSLAB0003" in text)]
    assert throttled, outliers
    assert all(o["below"] > 0.8 for o in found), outliers
    assert max(o["below"] for o in throttled) == max(o["below"] for o in found), outliers
    noise = [text for o, text in zip(found, outliers) if o not in throttled]
    if noise:
        print(f"unthrottled disks past the bar under TCG (not a failure): {noise}")


FLEET_POOL = "fleetpool"  # short: the table's pool column is 12 wide


def test_pool_hosts_reads_each_hosts_pool_into_one_table_and_writes_nothing(fleet, record_property):
    """`zfslab pool --hosts` over ssh (docs/pool.md#many-hosts): raidz1:3 with lz4 on fleet-a, mirror:2
    with compression off on fleet-b, each read by its host's own zfslab. One table of both, the
    findings of each (fleet-b's compression-off note; none on fleet-a), exit 0, and nothing written
    on either host (`zpool history -il` unchanged); the pools destroyed and the disks wiped after."""
    t0 = time.monotonic()
    made = {A: ("raidz1", DISKS[:3], "lz4"), B: ("mirror", DISKS[:2], "off")}
    try:
        for name, (kind, disks, compression) in made.items():
            fleet.ssh(name, f"udevadm settle; zpool create -f -o ashift=12 -O compression={compression} "
                            f"-O mountpoint=none {FLEET_POOL} {kind} {' '.join(disks)} && zpool sync {FLEET_POOL}")
        history = {name: fleet.ssh(name, f"zpool history -il {FLEET_POOL}").stdout for name in made}
        out = zfslab("pool", *fleet_args(fleet), FLEET_POOL)
        assert out.returncode == 0, out.stderr[-3000:]
        lines = out.stdout.splitlines()
        assert lines[0].split() == ["host", "pool", "state", "layout", "model", "findings"], out.stdout
        assert [line.split() for line in lines[1:3]] == [
            [A, FLEET_POOL, "ONLINE", "raidz1:3", "agrees", "none"],
            [B, FLEET_POOL, "ONLINE", "mirror:2", "agrees", "1", "note"]], out.stdout
        text = " ".join(out.stdout.split())
        assert f"{B} {FLEET_POOL}: - compression is off on {FLEET_POOL}" in text, out.stdout
        assert f"{A} {FLEET_POOL}:" not in text and "no report from" not in text, out.stdout
        assert {name: fleet.ssh(name, f"zpool history -il {FLEET_POOL}").stdout for name in made} == history
    finally:
        for name, (_, disks, _) in made.items():
            fleet.ssh(name, f"zpool destroy -f {FLEET_POOL}; "
                      + "; ".join(f"zpool labelclear -f {d}-part1; wipefs -aq {d}" for d in disks), check=False)
    for name in (A, B):
        no_pools(fleet, name)
    record_property("seconds", round(time.monotonic() - t0))
    print(f"pool --hosts over the fleet: {time.monotonic() - t0:.0f} s")
