"""What bench and drill share about disks: the options that name them, the safety gate's
inputs (the disks, the sandbox files, the typed serial numbers) and the sandbox itself."""

from __future__ import annotations

import argparse
import os
import sys

from zfslab.commands._common import DEFAULT_DB, int_arg
from zfslab.errors import UsageError, one_line
from zfslab.model.units import format_bytes
from zfslab.system.disks import (BadDeviceList, DisksRefused, check_wipe_allowed, inspect_disks, inspect_file,
                                 is_leftover_of, refusal_lines, waive_history)

# A sandbox file is sparse: its size is bounded by what the file system allows, not by free space
MAX_SANDBOX_BYTES = 16 << 40
MAX_SANDBOX_FILES = 65  # a sandbox is for trying zfslab out: 64 vdevs and a spare, as bench allows


def device_list(text: str) -> list[str]:
    devices = [d.strip() for d in text.split(",") if d.strip()]
    if not devices:
        raise UsageError("--disks: name at least one disk, e.g. --disks /dev/disk/by-id/ata-A,/dev/disk/by-id/ata-B")
    return devices


def inspect(devices: list[str], runner, sandbox: bool, db: str | None = None):
    """What each disk holds (every check reads only); for a sandbox, the files already there.
    A disk's SMART history counts only beyond what zfslab recorded after its own last wipe of
    it in this database (`db`, read-only); where the evidence is weaker, it is said on stderr."""
    if sandbox:
        infos = [inspect_file(d, runner) for d in devices if os.path.exists(d)]
    else:
        infos = waive_history(inspect_disks(devices, runner), recorded_histories(db))
    for line in note_lines(infos):
        print(line, file=sys.stderr)
    return infos


def note_lines(infos) -> list[str]:
    """Where the evidence is weaker than usual, one line a note: the same note for several disks
    (no smartctl) once, and a note true of every disk names none (no disk is singled out)."""
    said: dict[str, list[str]] = {}
    for i in infos:
        for note in i.notes:
            said.setdefault(note, []).append(i.given)
    return [one_line(f"zfslab: {'every disk' if len(given) == len(infos) > 1 else ', '.join(given)}: {note}")
            for note, given in said.items()]


def recorded_histories(db: str | None) -> dict[str, int]:
    """serial -> SMART bytes written, as zfslab recorded them after its own wipes (read-only)."""
    from zfslab.store.results import Results
    from zfslab.store.schema import open_readonly
    if not db or not os.path.exists(db):
        return {}
    conn = open_readonly(db)
    try:
        return Results(conn).disk_histories()
    finally:
        conn.close()


def history_recorder(infos, runner, results):
    """What runs after zfslab wiped disks: each one's SMART writes counter, recorded by serial,
    so its own writes never count as someone else's use of the disk (see inspect)."""
    from zfslab.system.smart import read_history
    serials = {i.given: i.serial for i in infos if i.serial}

    def record(devices: list[str]) -> None:
        for d in devices:
            history, _ = read_history(runner, d) if d in serials else (None, "")
            if history is not None and history.written_bytes is not None:
                results.record_disk_history(serials[d], history.written_bytes)
    return record


def same_size(infos) -> None:
    if len({i.size_bytes for i in infos}) > 1:
        listing = ", ".join(f"{i.given} {format_bytes(i.size_bytes)}" for i in infos)
        raise BadDeviceList(f"the disks differ in size ({listing}); bench compares layouts on identical disks")


def sandbox_paths(directory: str, count: int, size_text: str) -> tuple[list[str], int]:
    """The sandbox's file vdevs and their size, checked; nothing is created (see make_sandbox)."""
    from zfslab.model.units import parse_size
    size = parse_size(size_text)
    if not 64 << 20 <= size <= MAX_SANDBOX_BYTES:
        raise UsageError(f"--sandbox-size {size_text}: give 64MiB to 16TiB (ZFS needs vdevs of at least 64 MiB)")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UsageError(f"--sandbox {directory}: not a directory; give a directory for the file vdevs")
    if count > MAX_SANDBOX_FILES:
        raise UsageError(f"--sandbox: the layout needs {count} file vdevs; a sandbox holds at most "
                         f"{MAX_SANDBOX_FILES}: choose a layout of at most {MAX_SANDBOX_FILES - 1} disks, or real --disks")
    return [os.path.join(os.path.abspath(directory), f"vdev{i}") for i in range(count)], size


def make_sandbox(paths: list[str], size: int) -> None:
    """Create the sparse files that do not exist yet (a file already there is an earlier run's)."""
    try:
        os.makedirs(os.path.dirname(paths[0]), exist_ok=True)
        for path in paths:
            if not os.path.exists(path):
                with open(path, "wb") as f:
                    f.truncate(size)
    except OSError as e:
        raise UsageError(f"--sandbox {os.path.dirname(paths[0])}: cannot create {size:,}-byte sparse files there "
                         f"({e.strerror}); choose another directory or a smaller --sandbox-size") from None


def confirm_serials(dirty, args) -> set[str]:
    if args.confirm_serials is not None:
        return {s.strip() for s in args.confirm_serials.split(",") if s.strip()}
    if not args.wipe or not dirty:
        return set()
    if not sys.stdin.isatty():
        raise UsageError("--wipe needs the serial numbers: type them at the prompt, or give --confirm-serials")
    for d in dirty:
        print(f"  {d.given}: {d.model or '?'} serial {d.serial or '?'}, {format_bytes(d.size_bytes)}: {'; '.join(d.reasons)}",
              file=sys.stderr)
    typed = input("Everything on these disks will be destroyed. Type their serial numbers, separated by spaces: ")
    return set(typed.split())


def add_disk_options(p: argparse.ArgumentParser, *, disks_help: str, sandbox_help: str):
    """The options bench and drill share; returns the group where --disks and --sandbox exclude
    each other (drill adds --pool to it)."""
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--disks", metavar="DEV,DEV,...", help=disks_help)
    src.add_argument("--sandbox", metavar="DIR", help=sandbox_help)
    p.add_argument("--sandbox-size", default="1GiB", metavar="SIZE", help="size of each sandbox file (default 1GiB)")
    p.add_argument("--ashift", type=int_arg("--ashift", 9, 16), default=12, help="pool ashift, 9 to 16 (default 12)")
    p.add_argument("--db", default=DEFAULT_DB, metavar="FILE", help=f"results database (default {DEFAULT_DB})")
    p.add_argument("--wipe", action="store_true", help="allow disks that hold data (needs their serial numbers)")
    p.add_argument("--confirm-serials", metavar="S,S,...", help="the serial numbers of the disks to wipe, for scripts")
    return src


def gate(infos, own_guids, args: argparse.Namespace, sandbox: bool) -> None:
    """The safety gate: refuse unless every disk is empty, or holds only what a pool this database
    recorded (by GUID) left, or --wipe came with the serial numbers of the rest. Sandbox files
    that zfslab did not leave are refused outright: they have no serial number to confirm."""
    foreign = [i for i in infos if i.reasons and not is_leftover_of(i, own_guids)]
    if sandbox and foreign:
        raise DisksRefused("files in the sandbox directory that zfslab did not leave there (nothing was "
                           "written):\n  " + "\n  ".join(refusal_lines(foreign))
                           + "\nremove them or choose another --sandbox directory")
    check_wipe_allowed(foreign, wipe=args.wipe, confirmed_serials=confirm_serials(foreign, args))


def dry_run_verdict(infos, own_guids, args: argparse.Namespace, sandbox: bool) -> int:
    """What the gate would do with these disks, said on stderr without prompting: 0 when the run
    would go ahead (wiping the disks that hold data, if --wipe came with their serials), 10 when it
    would refuse."""
    foreign = [i for i in infos if i.reasons and not is_leftover_of(i, own_guids)]
    if not foreign:
        return 0
    lines = "\n  " + "\n  ".join(refusal_lines(foreign))
    confirmed = {x.strip() for x in (args.confirm_serials or "").split(",") if x.strip()}
    if not sandbox and args.wipe and all(i.serial and i.serial in confirmed for i in foreign):
        print("these disks hold data and the run would wipe them first (--wipe, serials confirmed):" + lines,
              file=sys.stderr)
        return 0
    if not sandbox and args.wipe and args.confirm_serials is None and sys.stdin.isatty():
        print("these disks hold data; the run would ask for their serial numbers, then wipe them:" + lines,
              file=sys.stderr)
        return 0
    print("these disks would be refused (nothing was written):" + lines, file=sys.stderr)
    return 10
