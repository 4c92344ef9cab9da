"""Test guests as a fleet of storage servers, reached from the host only by ssh through qemu
user-networking forwards bound to 127.0.0.1 (docs/test-guest.md#the-fleet-guests).

Each guest boots in the background with its own hostname, its own root filesystem and disks (sparse
files kept across boots: a host that comes back boots the same disks, and finds its own results
database where it left it), sshd with its own host key (kept in
its share, so a reboot shows the same key) and root's authorized_keys from a throw-away client
key, and a `zfslab` command on PATH running the mounted checkout. It then waits for the host's
word on a fifo (`/run/stop`), so it runs until the tests are done, or is killed as a host that
dies. The host knows a guest is up when an ssh `true` succeeds.
"""

from __future__ import annotations

import atexit
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.e2e.guest import guest

SERIES = "2.4"
MEMORY_MIB = 2048      # two guests and the host's tests share 24 GiB and two cores
CPUS = 1
READY_DEADLINE_S = 900  # a bound, not a target: a fleet guest was ready in about a minute, with two TCG guests beside it
TRY_EVERY_S = 2.0      # between two ssh tries, the host waits this long on qemu's exit (a dead guest is seen at once)
STOP_TIMEOUT_S = 180
# numpy's AVX2/AVX-512 sort dies of SIGSEGV under TCG (docs/test-guest.md#kernel-crashes): the same
# export the in-guest suite's payload makes, in the wrapper every ssh command finds on PATH
NPY_OFF = "AVX2 FMA3 AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"

PAYLOAD = """set -u
hostname {name}
ip link set lo up
# the one interface besides lo (udev may have renamed eth0); 10.0.2.15 is where slirp's forward
# delivers, inside the emulated network
dev=$(ls /sys/class/net | grep -vx lo | head -n 1)
ip link set "$dev" up
ip addr add 10.0.2.15/24 dev "$dev"
mkdir -p /run/sshd /root/.ssh /mnt/host/ssh
rm -f /etc/ssh/ssh_host_*
if [ -f /mnt/host/ssh/ssh_host_ed25519_key ]; then
  install -m 600 /mnt/host/ssh/ssh_host_ed25519_key /etc/ssh/
  install -m 644 /mnt/host/ssh/ssh_host_ed25519_key.pub /etc/ssh/
else
  ssh-keygen -A >/dev/null   # this guest's own keys, the image's removed; kept for its next boot
  cp /etc/ssh/ssh_host_ed25519_key /etc/ssh/ssh_host_ed25519_key.pub /mnt/host/ssh/
fi
install -m 600 /mnt/host/ssh/client_key.pub /root/.ssh/authorized_keys
# no bytecode written (not the suites' PYTHONPYCACHEPREFIX): test_fleet.py checks that a dry run
# writes no file on a host, /tmp included, as a user's installed zfslab (compiled by pip) writes none
cat > /usr/local/bin/zfslab <<'EOF'
#!/bin/sh
export NPY_DISABLE_CPU_FEATURES="{npy_off}"
export PYTHONPATH=/mnt/repo/src PYTHONDONTWRITEBYTECODE=1
exec python3 -m zfslab "$@"
EOF
chmod 755 /usr/local/bin/zfslab
# as Debian's zfs-import-cache.service at boot: a host that died with a pool comes back with it imported
if [ -s /etc/zfs/zpool.cache ]; then zpool import -c /etc/zfs/zpool.cache -aN; fi
mkfifo /run/stop
/usr/sbin/sshd -E /mnt/host/sshd.log -o ListenAddress=10.0.2.15 -o HostKey=/etc/ssh/ssh_host_ed25519_key \\
  -o UsePAM=no -o PasswordAuthentication=no -o KbdInteractiveAuthentication=no \\
  -o PermitRootLogin=prohibit-password -o MaxStartups=100:30:200 -o MaxSessions=64 || exit 3
echo "{name}: sshd started on $dev; waiting for the host's word on /run/stop"
read word < /run/stop
echo "{name}: stopped by the host ($word)"
"""


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on now (the kernel's pick)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log(message: str) -> None:
    guest.note(f"fleet: {message}")


def ssh_config_text(ports: dict[str, int], key: Path, known_hosts: Path) -> str:
    """An ssh_config(5) with one alias per guest, each a port on 127.0.0.1, and the test's own key
    and known_hosts for every host (the user's ~/.ssh is never read: ssh -F)."""
    return ("".join(f"Host {name}\n  HostName 127.0.0.1\n  Port {port}\n" for name, port in ports.items())
            + f"Host *\n  User root\n  IdentityFile {key}\n  IdentitiesOnly yes\n  IdentityAgent none\n"
            f"  UserKnownHostsFile {known_hosts}\n  GlobalKnownHostsFile /dev/null\n"
            "  StrictHostKeyChecking accept-new\n  LogLevel ERROR\n")


@dataclass
class FleetGuest:
    name: str                 # its hostname and its Host alias in the ssh_config
    port: int                 # 127.0.0.1:port forwards to its sshd
    disks: tuple[guest.Disk, ...]
    share: Path
    disk_dir: Path
    running: guest.RunningGuest | None = None
    ready_s: list[float] = field(default_factory=list)   # boot to ssh ready, each boot


class Fleet:
    """Guests named by alias, the ssh_config that reaches them, and their lifecycle."""

    def __init__(self, specs: dict[str, tuple[guest.Disk, ...]], *, root: Path | None = None, nice: int = 0):
        self.root = root or Path(tempfile.mkdtemp(prefix="zfslab-fleet-"))
        self.image = guest.ensure_image(SERIES)
        self.nice = nice
        self.key = self.root / "client_key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "zfslab-fleet-test", "-f", str(self.key)],
                       check=True)
        self.known_hosts = self.root / "known_hosts"
        self.known_hosts.touch()
        self.guests = {}
        for name, disks in specs.items():
            share = self.root / name / "share"
            (share / "ssh").mkdir(parents=True)
            shutil.copy(self.key.with_suffix(".pub"), share / "ssh" / "client_key.pub")
            self.guests[name] = FleetGuest(name, free_port(), tuple(disks), share, self.root / name / "disks")
        self.ssh_config = self.root / "ssh_config"
        self.ssh_config.write_text(ssh_config_text({g.name: g.port for g in self.guests.values()}, self.key,
                                                   self.known_hosts))

    def ssh(self, name: str, command: str, *, timeout_s: float = 120, check: bool = True) -> subprocess.CompletedProcess:
        """One shell command on the guest, as root, over ssh through its forward."""
        done = subprocess.run(["ssh", "-F", str(self.ssh_config), "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
                               name, command], capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
        if check and done.returncode != 0:
            raise guest.GuestError(f"{name}: `{command}` exited {done.returncode}: {done.stderr[-2000:]}")
        return done

    def start(self, name: str) -> None:
        """Boot the guest in the background on its disks (made at the first boot, kept after)."""
        g = self.guests[name]
        if g.running is not None and g.running.alive():
            raise guest.GuestError(f"{name} is running already")
        g.running = guest.start(self.image, PAYLOAD.format(name=name, npy_off=NPY_OFF), series=SERIES,
                                disks=list(g.disks), share=g.share, disk_dir=g.disk_dir, keep_disks=True,
                                memory_mib=MEMORY_MIB, cpus=CPUS, ssh_port=g.port, nice=self.nice,
                                own_root=True, timeout_s=4 * 3600)

    def wait_ready(self, name: str, deadline_s: float = READY_DEADLINE_S) -> float:
        """Seconds from boot until an ssh `true` succeeds, trying again until the deadline; each
        try is a real connection, logged. Between tries the host waits on qemu's exit, so a guest
        that died is reported at once, with its console."""
        g = self.guests[name]
        tries = 0
        while True:
            tries += 1
            done = self.ssh(name, "true", timeout_s=60, check=False)
            since_boot = time.monotonic() - g.running.t0
            if done.returncode == 0:
                log(f"{name}: ssh ready {since_boot:.0f} s after boot (try {tries})")
                g.ready_s.append(since_boot)
                return since_boot
            why = (done.stderr.strip().splitlines() or ["no message"])[-1]
            log(f"{name}: ssh try {tries} at {since_boot:.0f} s: exit {done.returncode}, {why}")
            if since_boot > deadline_s:
                g.running.kill()
                raise guest.GuestError(f"{name}: no ssh within {deadline_s} s of boot ({tries} tries; last: {why}); "
                                       f"console tail:\n{g.running.console()[-3000:]}")
            try:
                g.running.process.wait(timeout=TRY_EVERY_S)
            except subprocess.TimeoutExpired:
                continue
            raise guest.GuestError(f"{name}: qemu exited (code {g.running.process.returncode}) before ssh was ready; "
                                   f"console tail:\n{g.running.console()[-3000:]}\nrun.log:\n{self.run_log(name)}")

    def run_log(self, name: str) -> str:
        path = self.guests[name].share / "run.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else "(none)"

    def boot(self, *names: str) -> None:
        """Start the guests (at once), then wait until each answers over ssh."""
        for name in names:
            self.start(name)
        for name in names:
            self.wait_ready(name)

    def kill(self, name: str) -> None:
        """The host dies: qemu is killed; its disks stay as the guest left them."""
        self.guests[name].running.kill()
        log(f"{name}: killed")

    def stop(self, name: str) -> guest.GuestResult | None:
        """Tell the guest it is done (its payload returns, the guest powers off) and wait for it;
        killed if it does not answer or power off in time."""
        g = self.guests[name]
        if g.running is None or not g.running.alive():
            return None
        told = self.ssh(name, "echo done > /run/stop", timeout_s=60, check=False)
        if told.returncode != 0:
            log(f"{name}: the stop word did not arrive ({told.stderr.strip()[-200:]}); killing it")
            g.running.kill()
            return None
        try:
            return g.running.wait(timeout_s=STOP_TIMEOUT_S)
        except guest.GuestError as e:
            log(f"{name}: did not power off cleanly: {str(e)[:300]}")
            return None

    def close(self) -> dict[str, guest.GuestResult | None]:
        """Stop every guest still running and remove the disks (the shares stay for a post-mortem)."""
        results = {name: self.stop(name) for name in self.guests}
        for g in self.guests.values():
            shutil.rmtree(g.disk_dir, ignore_errors=True)
        return results



def fleet_specs() -> dict[str, tuple[guest.Disk, ...]]:
    """Two hosts with four identical 2 GiB disks each (the same serials, so the same by-id paths on
    both, as identical servers have) and a fifth that differs in size on fleet-b (preflight's
    refusal); fleet-a's fourth disk is throttled to a few MB/s (profile-disk's outlier)."""
    def disks(fifth_bytes: int, throttled: int | None) -> tuple[guest.Disk, ...]:
        out = []
        for i in range(5):
            size = fifth_bytes if i == 4 else 2 * guest.GIB
            slow = i == throttled
            out.append(guest.Disk(f"ZFSLAB{i:04d}", size, throttle_bytes_per_s=4 << 20 if slow else None,
                                  throttle_iops=50 if slow else None))
        return tuple(out)
    return {"fleet-a": disks(2 * guest.GIB, throttled=3), "fleet-b": disks(3 * guest.GIB, throttled=None)}


def by_id(disk: guest.Disk) -> str:
    return f"/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_{disk.serial}"


def boot_fleet(after=None, *, nice: int = 0) -> Fleet:
    """The fleet the tests use, booted and answering ssh. `after`: a Future to wait for first (a
    suite's boot, when test_guest.FLEET_AFTER names one), or None."""
    if after is not None:
        try:
            after.result()
        except Exception as e:   # noqa: BLE001 - its own test reports it; the fleet boots either way
            log(f"the guest run booted after ended with {type(e).__name__}; booting the fleet anyway")
    fleet = Fleet(fleet_specs(), nice=nice)
    atexit.register(fleet.close)   # a session that ends before the fleet tests' own teardown stops them too
    try:
        fleet.boot(*fleet.guests)
    except BaseException:
        fleet.close()
        raise
    return fleet


def main() -> int:
    """By hand: boot the fleet (or the named guests), print how to reach it, stop it on Enter."""
    guest.ECHO = True
    names = sys.argv[1:] or list(fleet_specs())
    fleet = Fleet({n: fleet_specs()[n] for n in names}, nice=19)
    try:
        fleet.boot(*names)
        print(f"ssh -F {shlex.quote(str(fleet.ssh_config))} {names[0]}   # Enter stops the fleet")
        input()
    finally:
        print(fleet.close())
    return 0


if __name__ == "__main__":
    sys.exit(main())
