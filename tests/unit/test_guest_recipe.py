"""The test guest's bookkeeping, without booting anything: which image serves which OpenZFS
series, what its cache key follows, and which in-guest files each series runs
(docs/test-guest.md#image-cache, #the-suite-inside)."""

import tempfile

import time

import pytest

from tests.e2e import test_guest
from tests.e2e.guest import guest


@pytest.fixture(autouse=True)
def _shares_under_tmp_path(monkeypatch, tmp_path):
    """start_guest_suites makes each boot's share with tempfile.mkdtemp: under this test's own
    folder, not /tmp, where the fakes' shares would outlive the session."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def test_two_series_share_the_trixie_image_and_21_keeps_bookworm():
    assert guest.DIST == {"2.1": "bookworm", "2.3": "trixie", "2.4": "trixie"}
    assert set(test_guest.SUITES) == {"2.3", "2.4", "2.4-drivers"} and test_guest.SUITES["2.4"] == ()
    assert {test_guest.series_of(name) for name in test_guest.SUITES} == {"2.3", "2.4"}


def test_the_key_follows_each_version_debian_serves(monkeypatch):
    served = {"zfs-dkms/trixie": "2.3.9-0+deb13u1", "zfs-dkms/trixie-backports": "2.4.4-1~bpo13+1",
              "linux-image-amd64/trixie": "6.12.117-1"}
    monkeypatch.setattr(guest, "package_versions", lambda dist: dict(served))
    key = guest.image_key("trixie")
    assert key.startswith("trixie-") and key == guest.image_key("trixie")
    assert guest.image_key("bookworm") != key
    for pkg in served:
        newer = dict(served, **{pkg: served[pkg] + "+1"})
        monkeypatch.setattr(guest, "package_versions", lambda dist, v=newer: dict(v))
        assert guest.image_key("trixie") != key, pkg


def test_named_files_missing_from_the_mounted_checkout_are_left_out(monkeypatch, tmp_path):
    inside = tmp_path / "tests" / "e2e" / "inside"
    inside.mkdir(parents=True)
    for name in ("test_drivers.py", "test_zfs_contract.py"):
        (inside / name).write_text("")
    monkeypatch.setenv("ZFSLAB_GUEST_REPO", str(tmp_path))
    assert test_guest._tests_for("2.3").split() == ["/mnt/repo/tests/e2e/inside/test_zfs_contract.py"]
    assert test_guest._tests_for("2.4-drivers") == "/mnt/repo/tests/e2e/inside/test_drivers.py"   # the others missing
    assert test_guest._tests_for("2.1").split() == [
        "/mnt/repo/tests/e2e/inside/test_drivers.py", "/mnt/repo/tests/e2e/inside/test_zfs_contract.py"]
    (inside / "test_footprint_ci.py").write_text("")
    assert test_guest._tests_for("2.3").endswith("/mnt/repo/tests/e2e/inside/test_footprint_ci.py")
    # 2.4's two boots run the folder between them, each file once
    assert test_guest._tests_for("2.4") == ("/mnt/repo/tests/e2e/inside "
                                            "--ignore=/mnt/repo/tests/e2e/inside/test_footprint.py "
                                            "--ignore=/mnt/repo/tests/e2e/inside/test_footprint_ci.py "
                                            "--ignore=/mnt/repo/tests/e2e/inside/test_drivers.py "
                                            "--ignore=/mnt/repo/tests/e2e/inside/test_drill.py "
                                            "--ignore=/mnt/repo/tests/e2e/inside/test_expansion.py "
                                            "--ignore=/mnt/repo/tests/e2e/inside/test_special_size.py "
                                            "--ignore=/mnt/repo/tests/e2e/inside/test_create_race.py "
                                            "--ignore=/mnt/repo/tests/e2e/inside/test_pool.py")
    (inside / "test_drill.py").write_text("")
    assert test_guest._tests_for("2.4-drivers").split() == [
        "/mnt/repo/tests/e2e/inside/test_drivers.py", "/mnt/repo/tests/e2e/inside/test_drill.py"]


def test_a_guest_has_no_network_unless_a_forward_from_loopback_is_asked_for():
    assert guest._nic_argv(None) == ["-nic", "none"]
    assert guest._nic_argv(2222) == ["-nic", "user,model=virtio-net-pci,restrict=on,hostfwd=tcp:127.0.0.1:2222-:22"]


def test_disks_are_kept_as_they_are_across_boots_and_throttled_when_asked(tmp_path):
    slow = guest.Disk("S1", 4096, throttle_bytes_per_s=4 << 20, throttle_iops=50)
    argv = guest._disk_argv([guest.Disk("P0", 4096), slow], tmp_path)
    drives = [argv[i + 1] for i, a in enumerate(argv) if a == "-drive"]
    assert drives == [f"file={tmp_path / 'P0.img'},if=none,id=d0,format=raw,cache=unsafe",
                      f"file={tmp_path / 'S1.img'},if=none,id=d1,format=raw,cache=unsafe,"
                      f"throttling.bps-total={4 << 20},throttling.iops-total=50"]
    (tmp_path / "P0.img").write_bytes(b"x" * 4096)   # what the guest wrote before it died
    guest._disk_argv([guest.Disk("P0", 4096)], tmp_path)
    assert (tmp_path / "P0.img").read_bytes() == b"x" * 4096


def test_the_fleet_is_twins_but_for_a_throttled_disk_and_a_larger_fifth():
    from tests.e2e.guest import fleet
    specs = fleet.fleet_specs()
    a, b = specs["fleet-a"], specs["fleet-b"]
    assert [d.serial for d in a] == [d.serial for d in b]   # the same by-id paths on both hosts
    assert [d.size_bytes for d in a[:4]] == [d.size_bytes for d in b[:4]] and a[4].size_bytes < b[4].size_bytes
    assert [i for i, d in enumerate(a) if d.throttle_bytes_per_s] == [3] and not any(d.throttle_bytes_per_s for d in b)
    text = fleet.ssh_config_text({"fleet-a": 2201, "fleet-b": 2202}, "/k", "/kh")
    assert text.count("HostName 127.0.0.1") == 2 and "Port 2201" in text and "Port 2202" in text
    assert "HostName" not in text.split("Host *")[1]   # no other address, for any host


def test_the_fleet_boots_beside_the_suites_and_after_a_named_one_when_asked(monkeypatch):
    """CI boots the fleet with the suites (FLEET_AFTER None): behind 2.3 it made the run's longest
    chain. The wait is kept for a name: the fleet then boots only once that suite is done."""
    import threading

    from tests.e2e.guest import fleet

    def run(after_name):
        release, order = threading.Event(), []

        def suite(series, tests, share):
            if series == "2.3":
                release.wait(30)
            order.append(series)

        def boot_fleet(after):
            if after is not None:
                after.result()
            order.append("fleet")
        monkeypatch.setattr(test_guest, "_STARTED", {})
        monkeypatch.setattr(test_guest, "FLEET_AFTER", after_name)
        monkeypatch.setattr(test_guest, "run_inside", suite)
        monkeypatch.setattr(guest, "ensure_image", lambda series: None)
        monkeypatch.setattr(fleet, "boot_fleet", boot_fleet)
        started = test_guest.start_guest_suites(fleet=True)
        return started, release, order

    started, release, order = run(None)
    started["fleet"].result(timeout=30)   # while 2.3's suite is still held
    assert not started["2.3"].done() and "2.3" not in order
    release.set()
    started["2.3"].result(timeout=30)
    assert set(test_guest.start_guest_suites(fleet=True)) == {"2.3", "2.4", "2.4-drivers", "fleet"}

    started, release, order = run("2.3")
    started["2.4"].result(timeout=30)
    started["2.4-drivers"].result(timeout=30)
    assert not started["fleet"].done() and "fleet" not in order
    release.set()
    started["fleet"].result(timeout=30)
    assert order.index("fleet") > order.index("2.3")


def test_only_the_fleet_boots_for_the_fleet_tests_alone(monkeypatch):
    from tests.e2e.guest import fleet
    monkeypatch.setattr(test_guest, "_STARTED", {})
    monkeypatch.setattr(guest, "ensure_image", lambda series: None)
    monkeypatch.setattr(fleet, "boot_fleet", lambda after: after)
    started = test_guest.start_guest_suites(suites=False, fleet=True)
    assert set(started) == {"fleet"} and started["fleet"].result(timeout=30) is None   # nothing to wait for


def _running(tmp_path, script: str, timeout_s: float = 60) -> guest.RunningGuest:
    """A stand-in for qemu: a real process that plays a guest's part in the share (run.log as the
    payload starts, run.rc as it ends), or never does."""
    import subprocess
    share = tmp_path / "share"
    share.mkdir()
    process = subprocess.Popen(["sh", "-c", script], cwd=share)
    return guest.RunningGuest(process, share, tmp_path / "disks", keep_disks=True, timeout_s=timeout_s)


def test_a_boot_that_never_starts_its_payload_is_killed_at_the_payload_deadline(tmp_path):
    running = _running(tmp_path, "exec tail -f /dev/null")  # a guest stuck in its boot: no run.log, ever
    with pytest.raises(guest.GuestBootStalled, match="had not started its payload"):
        running.wait(payload_within_s=0.2)
    assert running.process.returncode is not None  # killed, not left running


def test_a_payload_that_started_is_waited_for_past_the_payload_deadline(tmp_path):
    # run.log at once, then the "payload" waits for a file this test writes after the deadline has passed
    running = _running(tmp_path, "echo started > run.log; while [ ! -e go ]; do sleep 0.05; done; echo rc=0 > run.rc")
    import threading
    import time
    deadline_passed = threading.Event()

    def release():
        time.sleep(0.5)  # past payload_within_s (0.2): the watchdog has had its chance to kill it
        deadline_passed.set()
        (running.share / "go").write_text("")
    threading.Thread(target=release).start()
    result = running.wait(payload_within_s=0.2)
    assert deadline_passed.is_set() and result.returncode == 0 and result.log == "started\n"


def test_setup_work_waits_for_the_boots_started_at_once(monkeypatch, tmp_path):
    from concurrent.futures import Future
    share = tmp_path / "zfslab-guest-2.4-x"
    (share / "share").mkdir(parents=True)
    pending: Future = Future()
    monkeypatch.setattr(test_guest, "_STARTED", {"2.4": pending, "fleet": Future()})
    monkeypatch.setattr(test_guest, "_SHARES", {"2.4": share})
    assert test_guest.boots_settled()  # waiting for the image: no qemu yet, nothing under way
    (share / "share" / "run.sh").write_text("")
    assert not test_guest.boots_settled()  # booting: no run.log yet (the fleet does not count)
    (share / "share" / "run.log").write_text("")
    assert test_guest.boots_settled()
    (share / "share" / "run.log").unlink()
    pending.set_result(None)
    assert test_guest.boots_settled()  # ended (a failed boot too): nothing left to wait for


def test_a_boot_threads_note_stays_out_of_the_running_tests_output(capfd, monkeypatch):
    """CI: a fleet guest's ssh retry, printed by its boot thread, failed a unit test that asserted
    an empty stderr. A note is kept for the session's summary instead, printed only by hand (ECHO)."""
    import threading
    monkeypatch.setattr(guest, "NOTES", [])
    monkeypatch.setattr(guest, "ECHO", False)
    thread = threading.Thread(target=guest.note, args=("fleet: fleet-a: ssh try 3 at 9 s: exit 255",))
    thread.start()
    thread.join()
    assert capfd.readouterr() == ("", "")
    assert len(guest.NOTES) == 1 and guest.NOTES[0].endswith("fleet: fleet-a: ssh try 3 at 9 s: exit 255")
    monkeypatch.setattr(guest, "ECHO", True)
    guest.note("by hand")
    assert capfd.readouterr().err == "by hand\n"


def test_a_payload_that_hangs_after_a_hung_task_report_is_killed_and_said(tmp_path):
    """The payload started, the console has the kernel's hung-task report, and nothing is written
    any more: killed after hung_s, not at the boot's timeout (80 min in CI)."""
    running = _running(tmp_path, "echo started > run.log; echo 'INFO: task txg_sync:3275 blocked for more than "
                                 "120 seconds.' > console.log; exec tail -f /dev/null")
    with pytest.raises(guest.GuestHung, match="hung in its payload"):
        running.wait(payload_within_s=30, hung_s=0.5)
    assert running.process.returncode is not None


def test_a_hung_task_report_the_kernel_repeats_is_no_progress(tmp_path, monkeypatch):
    """A CI-like run's 2.4-drivers boot hung in a raidz expansion (txg_sync and raidz_expand
    blocked) and its kernel repeated the report every 120 s of the guest's clock: the console kept
    changing, so the watchdog that took any console change as progress never fired. The report's
    lines do not count; a kernel line of another kind does."""
    monkeypatch.setattr(guest, "WATCH_S", 0.2)   # a stray clock tick of the stand-in's own is 5 %, not busy
    report = ("[ 1450.94] INFO: task raidz_expand:4350 blocked for more than 120 seconds.\n"
              "[ 1450.94]       Tainted: P           OE      6.12.117+deb13-amd64 #1 Debian 6.12.117-1\n"
              "[ 1450.94] \"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.\n")
    running = _running(tmp_path, f"echo started > run.log; while true; do printf '{report}' >> console.log; "
                                 "sleep 0.1; done")
    t0 = time.monotonic()
    with pytest.raises(guest.GuestHung, match="hung in its payload"):
        running.wait(payload_within_s=30, hung_s=0.6)
    assert time.monotonic() - t0 < 20
    # the kernel saying something else is progress, as the payload's output is
    (tmp_path / "b").mkdir()
    running = _running(tmp_path / "b", f"echo started > run.log; printf '{report}' > console.log; "
                                       "for i in 1 2 3 4 5 6 7 8 9 10; do echo \"[ 9.$i] sd 0:0:0:$i: attached\" "
                                       ">> console.log; sleep 0.2; done; echo rc=0 > run.rc")
    assert running.wait(payload_within_s=30, hung_s=1.0).returncode == 0
    # nor is a guest that burns its CPU (a slow reflow): only an idle one is hung
    (tmp_path / "c").mkdir()
    running = _running(tmp_path / "c", f"echo started > run.log; printf '{report}' > console.log; "
                                       "t=$(($(date +%s) + 3)); while [ $(date +%s) -lt $t ]; do i=0; "
                                       "while [ $i -lt 20000 ]; do i=$((i + 1)); done; done; "
                                       "echo rc=0 > run.rc")
    assert running.wait(payload_within_s=30, hung_s=1.0).returncode == 0


def test_a_payload_still_writing_is_not_taken_as_hung_by_an_old_report(tmp_path, monkeypatch):
    """The same report, but the payload goes on writing (a stall that passed): waited for, through
    many looks (every 0.05 s here) each of which finds it written within hung_s."""
    monkeypatch.setattr(guest, "WATCH_S", 0.05)
    running = _running(tmp_path, "echo 'INFO: task fio:1 blocked for more than 120 seconds.' > console.log; "
                                 "for i in 1 2 3 4 5 6 7 8 9 10; do echo . >> run.log; sleep 0.2; done; "
                                 "echo rc=0 > run.rc")
    result = running.wait(payload_within_s=30, hung_s=1.0)
    assert result.returncode == 0 and result.log.count(".") == 10
