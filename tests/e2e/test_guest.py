"""Boots the test guest (real OpenZFS kernel module, OpenZFS 2.4 and 2.3) and runs tests/e2e/inside in it.

Needs root and qemu (scripts/install-test-deps.sh installs them); skipped otherwise, unless
ZFSLAB_TEST_REQUIRE_E2E=1, when a skip fails. One boot per version serves its whole suite; the
versions boot at the same time, as soon as collection ends, and these tests run last: a TCG guest
keeps about one host core busy, and the host's own tests run meanwhile.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import xml.etree.ElementTree as ET
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.e2e.guest import guest

pytestmark = pytest.mark.e2e

DISKS = [guest.Disk(f"ZFSLAB{i:04d}", 2 * guest.GIB) for i in range(8)]
# A guard against a hung guest, not a performance target. An hour killed the 2.4 boot of a CI-like
# run on 2026-11-27 while it was still running its tests, 35 done, and likely stop 39's in CI too
# (a boot stuck before its payload is caught by PAYLOAD_WITHIN_S instead); the whole run must end
# within CI's 90 minutes anyway.
BOOT_TIMEOUT_S = 4800
# From qemu's start to the payload's: about 1.5 min on an idle host, 4-9 min at a load of 10-12
# (2026-11-27). A boot stuck longer (a 2.4 boot at load 11 had not started its payload after 23
# min, its console ending in an RCU stall report) is killed here and booted once more.
PAYLOAD_WITHIN_S = 900
BY_ID = ",".join(f"/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_{d.serial}" for d in DISKS)


def _need_guest():
    missing = [t for t in ("qemu-system-x86_64", "debootstrap") if shutil.which(t) is None]
    reason = f"missing {', '.join(missing)}" if missing else "not root" if os.geteuid() != 0 else None
    if reason:
        if os.environ.get("ZFSLAB_TEST_REQUIRE_E2E") == "1":
            pytest.fail(f"ZFSLAB_TEST_REQUIRE_E2E=1 but the guest cannot run: {reason}")
        pytest.skip(f"the e2e guest needs root and qemu: {reason}")


def run_inside(series: str, tests: str, tmp_path) -> tuple[guest.GuestResult, ET.Element]:
    image = guest.ensure_image(series)
    payload = f"""
cd /tmp
# numpy's argsort (AVX2/AVX-512 x86-simd-sort) died of SIGSEGV under TCG in special-size, every time:
# the emulator's vector instructions, not zfslab; the guest's numpy keeps to its SSE baseline
export NPY_DISABLE_CPU_FEATURES="AVX2 FMA3 AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"
# bytecode in the guest's tmpfs (the checkout is mounted read-only): each zfslab a test starts
# compiles nothing again (with none written, every process compiled ~120 modules, ~3 s under TCG)
export PYTHONPATH=/mnt/repo/src:/mnt/repo PYTHONPYCACHEPREFIX=/tmp/pycache HYPOTHESIS_STORAGE_DIRECTORY=/tmp/hyp
export ZFSLAB_TEST_DISKS={BY_ID} ZFSLAB_TEST_REQUIRE_E2E=1 ZFSLAB_TEST_FILEDIR=/var/tmp/zfslab-e2e ZFSLAB_E2E_INSIDE=1
python3 -m pytest -p no:cacheprovider -q -rA --rootdir=/mnt/repo -c /mnt/repo/pyproject.toml \\
    --junitxml=/mnt/host/junit.xml {tests}
"""
    share = tmp_path / "share"
    boot = lambda share: guest.boot(image, payload, series=series, disks=DISKS, share=share,  # noqa: E731
                                    timeout_s=BOOT_TIMEOUT_S, payload_within_s=PAYLOAD_WITHIN_S)
    try:
        result = boot(share)
    except guest.GuestKernelCrash as crash:
        # OpenZFS's sequential-rebuild race (openzfs/zfs#18276, fixed in 2.3.9 and 2.4.4, not in
        # Debian's 2.1.11 / 2.3.2) oopses in vdev_rebuild_range now and then under TCG. It is
        # not ours to fix: run the suite once more on a fresh boot, and say so. Any other crash fails.
        if "vdev_rebuild" not in crash.console:
            raise
        print(f"guest {series}: kernel crashed in OpenZFS's rebuild thread (openzfs/zfs#18276); booting once more")
        share = tmp_path / "share-retry"
        result = boot(share)
    except guest.GuestBootStalled as stalled:
        # a boot stuck before its payload under a loaded host (docs/test-guest.md#kernel-crashes):
        # once more on a fresh boot, and said; a second stall fails
        print(f"guest {series}: {str(stalled).splitlines()[0]}; booting once more")
        share = tmp_path / "share-retry"
        result = boot(share)
    junit = share / "junit.xml"
    assert junit.exists(), f"the suite did not run in the guest:\n{result.log[-4000:]}"
    return result, ET.parse(junit).getroot()


# What each boot runs in CI, by name: the OpenZFS series is the name's part before any "-". The
# driver's contract (output formats, error texts) and RAIDZ expansion differ by version and run on
# both series; 2.3 also runs test_footprint_ci.py (footprint against real ZFS, small;
# docs/footprint.md#judged-on-real-zfs), and is done early, which the fleet's boot waits for. The
# newest's tests are split over three boots so that none is longer than CI can wait for: in a
# CI-like run of 2026-11-27 the 2.4 boot that ran the whole folder but the drill used 2,262 s of a
# host core for its first 35 tests (about 58 min for all) and was killed at BOOT_TIMEOUT_S, as
# stop 39's CI boot likely was. "2.4-drivers" (fio, profile-disk, capacity, resilver: 1,170 s of
# pytest on 2.3.9 under load) boots at once beside "2.4" (bench, safety, the races, special-size,
# pool, contract, expansion) and 2.3; "2.4-drill" once the fleet's guests have stopped (AFTER).
# 2.1 is not run in CI (its image costs a second debootstrap and DKMS build), but stays buildable
# and bootable by hand: `guest.py 2.1 '...'`, with the CONTRACT files. A named file missing from
# the checkout is left out. CI time: docs/test-guest.md#time-in-ci.
CONTRACT = ("test_drivers.py", "test_zfs_contract.py")
SUITES = {"2.4": (), "2.3": ("test_zfs_contract.py", "test_expansion.py", "test_footprint_ci.py"),
          "2.4-drivers": ("test_drivers.py",), "2.4-drill": ("test_drill.py",)}
BY_HAND = {"2.1": CONTRACT}  # SUITES' (): the whole folder but NOT_IN_CI and the files another boot of the series runs
# Files 2.4's whole-folder run leaves out: test_footprint.py (lz4 and zstd from the image's
# python3-lz4 and python3-zstandard), run by hand, about 6.5 min of pytest in a guest of its own and
# more beside CI's two; test_footprint_ci.py, which 2.3 runs: the model's rules are the same on both
NOT_IN_CI = ("test_footprint.py", "test_footprint_ci.py")
MIN_TESTS = {"2.4": 28, "2.3": 14, "2.4-drivers": 20, "2.4-drill": 5, "2.1": 15}
# The fleet's two guests (tests/e2e/test_fleet.py) boot when 2.3's guest has powered off: the host
# has two cores, and four TCG guests at once made CI time out. 2.3's suite is the short one (about
# 8 min); 2.4-drill boots when the fleet has stopped (its fixture's teardown, or when the fleet is
# not selected, when 2.3 has ended). docs/test-guest.md#time-in-ci.
FLEET_AFTER = "2.3"
AFTER = {"2.4-drill": "fleet"}
# pytest imports this file as e2e.test_guest, tests/conftest.py as tests.e2e.test_guest: two module
# objects. The guest module is imported by one name only, so the started suites live there, once.
_STARTED: dict[str, Future] = guest.__dict__.setdefault("_started_suites", {})


_SHARES: dict[str, Path] = guest.__dict__.setdefault("_suite_shares", {})


def boots_settled() -> bool:
    """Has every boot started at once (not gated by AFTER) reached its payload, or ended? Until
    then the host's background work (tests/setup) waits: a boot is the most sensitive time of a
    guest's (docs/test-guest.md#kernel-crashes)."""
    for name, future in _STARTED.items():
        if name in AFTER or name == "fleet" or future.done():
            continue
        share = _SHARES.get(name)
        if share is None or not any((share / d / "run.log").exists() for d in ("share", "share-retry")):
            return False
    return True


def series_of(name: str) -> str:
    return name.split("-")[0]


def _tests_for(name: str) -> str:
    """The payload's test paths for a boot: the named files present in the mounted checkout."""
    names = {**SUITES, **BY_HAND}[name]
    present = [n for n in names if (guest.repo_to_mount() / "tests/e2e/inside" / n).exists()]
    inside = "/mnt/repo/tests/e2e/inside"
    if names:
        return " ".join(f"{inside}/{n}" for n in present) or inside
    elsewhere = [f for other, files in SUITES.items()
                 if other != name and series_of(other) == series_of(name) for f in files]
    return " ".join([inside, *(f"--ignore={inside}/{n}" for n in (*NOT_IN_CI, *elsewhere))])


def _run_after(gate: str, name: str, share: Path, started_suites: dict[str, Future], stopped: threading.Event,
               run) -> tuple[guest.GuestResult, ET.Element]:
    """Boot `name` with `run` once `gate` is over: the fleet stopped (or never started), or a suite
    ended. The session ending first (pytest -x, Ctrl-C) cancels the boot instead of waiting for it.
    What it reads is bound when it is submitted: tests/unit/test_guest_recipe.py swaps this
    module's globals for fakes while the real gated boot is waiting (once it ran the fake suite)."""
    main = threading.main_thread()
    while main.is_alive():
        started = started_suites.get(gate)
        if gate == "fleet":
            over = started is None and started_suites[FLEET_AFTER].done() or stopped.is_set() \
                or (started is not None and started.done() and started.exception() is not None)
        else:
            over = started is None or started.done()
        if over:
            return run(series_of(name), _tests_for(name), share)
        stopped.wait(5)  # a poll, not a guess at a duration: the gate is read again each time
    raise RuntimeError(f"the session ended before {name}'s guest could boot")


def start_guest_suites(*, suites: bool = True, fleet: bool = False) -> dict[str, Future]:
    """Each boot of SUITES in a background thread: those without an AFTER at once, the others and
    the fleet's guests when their gate is over (each once a session). tests/conftest.py starts them
    when collection ends, so that the host's own tests run beside them."""
    from tests.e2e.guest import fleet as fleet_guests

    todo = [s for s in SUITES if suites and s not in _STARTED]
    if todo or (fleet and "fleet" not in _STARTED):
        for name in SUITES:  # 2.3 and 2.4 (and the fleet's 2.4) share one image: the first call builds it
            guest.ensure_image(series_of(name))
        pool = ThreadPoolExecutor(max_workers=len(SUITES) + 1, thread_name_prefix="guest")
        shares = {name: Path(tempfile.mkdtemp(prefix=f"zfslab-guest-{name}-")) for name in todo}
        _SHARES.update(shares)
        for name in (n for n in todo if n not in AFTER):
            _STARTED[name] = pool.submit(run_inside, series_of(name), _tests_for(name), shares[name])
        if fleet and "fleet" not in _STARTED:
            _STARTED["fleet"] = pool.submit(fleet_guests.boot_fleet, _STARTED.get(FLEET_AFTER))
        for name in (n for n in todo if n in AFTER):  # their gates read the futures above
            _STARTED[name] = pool.submit(_run_after, AFTER[name], name, shares[name], _STARTED,
                                         fleet_guests.FLEET_STOPPED, run_inside)
        pool.shutdown(wait=False)
    return _STARTED


def guest_can_run() -> bool:
    return all(shutil.which(t) for t in ("qemu-system-x86_64", "debootstrap")) and os.geteuid() == 0


@pytest.fixture(scope="module")
def guest_suites():
    """A test waits on its own version's suite."""
    _need_guest()
    return start_guest_suites()


@pytest.mark.parametrize("name", tuple(SUITES))
def test_drivers_in_the_guest(name, guest_suites: dict[str, Future], record_property):
    if AFTER.get(name) == "fleet" and "fleet" in guest_suites:
        # test_fleet.py has run by now (e2e tests run last, in file order): a fleet no fleet test's
        # fixture closed (each one skipped or deselected) would keep this boot waiting for ever
        from tests.e2e.guest.fleet import FLEET_STOPPED
        fleet = guest_suites["fleet"]
        if not FLEET_STOPPED.is_set() and fleet.exception() is None:
            fleet.result().close()
    result, root = guest_suites[name].result()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    record_property("guest_seconds", round(result.seconds))
    failed = [f"{c.get('name')}: {(c.find('failure') if c.find('failure') is not None else c.find('error')).get('message')}"
              for c in suite.iter("testcase") if c.find("failure") is not None or c.find("error") is not None]
    skipped = [c.get("name") for c in suite.iter("testcase") if c.find("skipped") is not None]
    assert not failed, "\n".join(failed) + "\n" + result.log[-3000:]
    assert not skipped, skipped
    assert int(suite.get("tests")) >= MIN_TESTS[name]
    assert result.returncode == 0, result.log[-3000:]
