"""What bench and drill share about disks on the command line: the options that name them, and
the user's consent for the safety gate (system/disk_gate.py) from --wipe, --confirm-serials or a
prompt. The gate itself, and the sandbox's files (system/sandbox.py), are the library's."""

from __future__ import annotations

import argparse
import os
import sys

from zfslab.commands._common import DEFAULT_DB, add_ashift_option
from zfslab.errors import UsageError, one_line
from zfslab.model.units import format_bytes
from zfslab.system import disk_gate
from zfslab.system.disk_gate import Consent, parse_serials
from zfslab.system.disks import BadDeviceList, inspect_disks, inspect_file, waive_history


def device_list(text: str) -> list[str]:
    devices = [d.strip() for d in text.split(",") if d.strip()]
    if not devices:
        raise UsageError("--disks: name at least one disk, e.g. --disks /dev/disk/by-id/ata-A,/dev/disk/by-id/ata-B")
    return devices


def inspect(devices: list[str], runner, sandbox: bool, db: str | None = None):
    """What each disk holds (every check reads only); for a sandbox, the files already there.
    A disk's SMART history counts only beyond what zfslab recorded after its own last wipe of
    it in this database (`db`, read-only); where the evidence is weaker, it is said on stderr."""
    from zfslab.store.runs import recorded_histories
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


def consent(args: argparse.Namespace, foreign, *, ask: bool) -> Consent:
    """What the user allowed, from --wipe and --confirm-serials, or else typed at a prompt
    (`ask`: a real run; a dry run only notes that the prompt would come)."""
    if args.confirm_serials is not None or not args.wipe:
        given = args.confirm_serials   # a list from the command line (repeatable), a string from a caller
        return Consent(args.wipe, parse_serials(",".join(given) if isinstance(given, list) else given))
    if not foreign:
        return Consent(True)
    if not ask:
        return Consent(True, will_ask=sys.stdin.isatty())
    if not sys.stdin.isatty():
        raise UsageError("--wipe needs the serial numbers: type them at the prompt, or give --confirm-serials")
    for d in foreign:
        print(f"  {d.given}: {d.model or '?'} serial {d.serial or '?'}, {format_bytes(d.size_bytes)}: "
              f"{'; '.join(d.reasons)}", file=sys.stderr)
    typed = input("Everything on these disks will be destroyed. Type their serial numbers, separated by spaces: ")
    return Consent(True, parse_serials(typed))


def require_disks(args, prog: str) -> None:
    """argparse's own refusal, for a command whose other verbs need no disks (bench --status RUN)."""
    if args.disks is None and args.sandbox is None:
        raise UsageError(f"one of the arguments --disks --sandbox is required (see {prog} --help)")


def add_disk_options(p: argparse.ArgumentParser, *, disks_help: str, sandbox_help: str, required: bool = True):
    """The options bench and drill share; returns the group where --disks and --sandbox exclude
    each other (drill adds --pool to it). required=False: the command checks it (require_disks)."""
    src = p.add_mutually_exclusive_group(required=required)
    src.add_argument("--disks", metavar="DEV,DEV,...", help=disks_help)
    src.add_argument("--sandbox", metavar="DIR", help=sandbox_help)
    p.add_argument("--sandbox-size", default="1GiB", metavar="SIZE", help="size of each sandbox file (default 1GiB)")
    add_ashift_option(p, "pool ashift, 9 to 16 (default 12)")
    p.add_argument("--db", default=DEFAULT_DB, metavar="FILE", help=f"results database (default {DEFAULT_DB})")
    p.add_argument("--wipe", action="store_true", help="allow disks that hold data (needs their serial numbers)")
    # repeatable: with --hosts each names one host's disks, HOST=S,S (commands/_hosts.py host_serials)
    p.add_argument("--confirm-serials", metavar="S,S,...", action="append",
                   help="the serial numbers of the disks to wipe, for scripts; with --hosts: HOST=S,S,... for "
                        "each host (repeat)")
    return src


def gate(infos, own_guids, args: argparse.Namespace, sandbox: bool) -> None:
    """The safety gate (system/disk_gate.py), with the serials asked for when --wipe came without them."""
    disk_gate.gate(infos, own_guids, consent(args, disk_gate.foreign_disks(infos, own_guids), ask=not sandbox), sandbox)


def dry_run_verdict(infos, own_guids, args: argparse.Namespace, sandbox: bool) -> int:
    """What the gate would do with these disks, said on stderr without prompting: 0 when the run
    would go ahead (wiping the disks that hold data, if --wipe came with their serials), 10 when it
    would refuse."""
    foreign = disk_gate.foreign_disks(infos, own_guids)
    verdict = disk_gate.dry_run_verdict(infos, own_guids, consent(args, foreign, ask=False), sandbox)
    if verdict.message:
        print(verdict.message, file=sys.stderr)
    return verdict.exit_code
