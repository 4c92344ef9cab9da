"""How much sooner a calibration ends split over two hosts than on one: the fleet's two guests
(tests/e2e/guest/fleet.py), the same layouts and options, `bench --hosts fleet-a` then `bench
--hosts fleet-a,fleet-b`, each into a database of its own. Prints each run's wall time, the
split's prediction (`--dry-run`'s first line) and the ratio of the two measured times; then
`profile-disk --hosts` over both, whose report names fleet-a's throttled fourth disk.

TCG guests: the time is the guests' (about one host core each), not a disk's; what it shows is the
split's bookkeeping (preflight, ssh, the pull) against the work it shares out. Run from the
checkout's root, as root, with no other guest running:

    python3 benchmarks/fleet_split.py [LAYOUTS]     # default: mirror:2,2xdisk,raidz1:3,3xdisk,mirror:3,raidz2:3

A third run does the two hosts' bench detached (`--detach`, then `--attach RUN --interval 2` from a
new controller until it ends), to show what following a detached run costs against holding one
ssh session a layout.
"""
import re

import os
import subprocess
import sys
import tempfile
import time

sys.path[:0] = [os.path.join(os.path.dirname(__file__), "..", "src"), os.path.join(os.path.dirname(__file__), "..")]

from tests.e2e.guest import fleet as fleet_guests  # noqa: E402

LAYOUTS = sys.argv[1] if len(sys.argv) > 1 else "mirror:2,2xdisk,raidz1:3,3xdisk,mirror:3,raidz2:3"
QUICK = ["--suite", "quick", "--size", "64m", "--runtime", "2", "--ramp", "0", "--repeats", "1"]
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def zfslab(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "zfslab", *args], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=SRC), stdin=subprocess.DEVNULL, timeout=7200)
    return p, time.monotonic() - t0


def main() -> int:
    specs = fleet_guests.fleet_specs()
    disks = ",".join(fleet_guests.by_id(d) for d in specs["fleet-a"][:3])
    fleet = fleet_guests.boot_fleet(nice=0)
    try:
        with tempfile.TemporaryDirectory(prefix="zfslab-split-") as tmp:
            rows = []
            for hosts in ("fleet-a", "fleet-a,fleet-b"):
                common = ["bench", "--hosts", hosts, "--ssh-config", str(fleet.ssh_config), "--disks", disks,
                          "--layouts", LAYOUTS, *QUICK, "--db", os.path.join(tmp, f"{hosts}.sqlite"),
                          "--remote-db", f"/var/tmp/zfslab-split-{len(rows)}-{{host}}.sqlite"]
                plan, _ = zfslab(*common, "--dry-run")
                if plan.returncode != 0:
                    print(plan.stdout + plan.stderr, file=sys.stderr)
                    return 1
                run, seconds = zfslab(*common)
                print(run.stdout.strip())
                if run.returncode != 0:
                    print(run.stderr[-3000:], file=sys.stderr)
                    return 1
                rows.append((hosts, plan.stdout.splitlines()[0], seconds))
            # the same split, detached: the start returns, a new controller follows it to its end
            hosts = "fleet-a,fleet-b"
            db = os.path.join(tmp, "detached.sqlite")
            common = ["bench", "--hosts", hosts, "--ssh-config", str(fleet.ssh_config), "--disks", disks,
                      "--layouts", LAYOUTS, *QUICK, "--db", db, "--remote-db", "/var/tmp/zfslab-split-2-{host}.sqlite"]
            start, started_s = zfslab(*common, "--detach")
            if start.returncode != 0:
                print(start.stdout + start.stderr, file=sys.stderr)
                return 1
            run = re.search(r"detached run (\S+):", start.stdout)[1]
            follow, followed_s = zfslab("bench", "--db", db, "--ssh-config", str(fleet.ssh_config), "--attach", run,
                                        "--interval", "2")
            print(follow.stdout.strip())
            if follow.returncode != 0:
                print(follow.stderr[-3000:], file=sys.stderr)
                return 1
            rows.append((hosts + " detached", f"the start returned in {started_s:.0f} s", started_s + followed_s))
            for hosts, predicted, seconds in rows:
                print(f"{hosts}: measured {seconds:,.0f} s; {predicted}")
            print(f"one host / two hosts, measured: {rows[0][2] / rows[1][2]:.2f}; detached: {rows[0][2] / rows[2][2]:.2f}")
            # and the acceptance report a person reads: fleet-a's fourth disk is throttled to 4 MB/s
            four = ",".join(fleet_guests.by_id(d) for d in specs["fleet-a"][:4])
            profile, seconds = zfslab("profile-disk", "--hosts", "fleet-a,fleet-b", "--ssh-config",
                                      str(fleet.ssh_config), "--disks", four, "--seconds", "5")
            print(f"\n$ zfslab profile-disk --hosts fleet-a,fleet-b --disks ... --seconds 5   # {seconds:.0f} s, "
                  f"exit {profile.returncode}\n{profile.stdout}{profile.stderr[-2000:]}")
    finally:
        for name, result in fleet.close().items():
            print(f"{name}: stopped, payload rc={None if result is None else result.returncode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
