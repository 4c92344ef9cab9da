"""The safety gate bench and drill pass before writing a disk (docs/safety.md).

A disk goes ahead when it is empty, when it holds only what a pool this database recorded (by
GUID) left, or when the user allowed wiping it and confirmed its serial number. What the user
allowed is a `Consent` value: the command layer builds it from its options or a prompt; nothing
here reads a terminal. Sandbox files zfslab did not leave are refused outright: they have no
serial number to confirm.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from zfslab.system.disks import DiskInfo, DisksRefused, check_wipe_allowed, is_leftover_of, refusal_lines


def parse_serials(text: str | None) -> frozenset[str]:
    """Serial numbers as a user gives them: separated by commas (--confirm-serials) or spaces (the prompt)."""
    return frozenset(s for s in re.split(r"[,\s]+", text or "") if s)


@dataclass(frozen=True)
class Consent:
    """What the user allowed: to wipe disks that hold data, and the serial numbers confirmed;
    `will_ask`: the serials are still to be typed at a prompt (a dry run says so)."""

    wipe: bool = False
    serials: frozenset[str] = frozenset()
    will_ask: bool = False

    def confirms(self, info: DiskInfo) -> bool:
        return self.wipe and bool(info.serial) and info.serial in self.serials


def foreign_disks(infos: Iterable[DiskInfo], own_guids: set[str] | frozenset[str]) -> list[DiskInfo]:
    """The disks holding data that is not a leftover of a pool this database recorded."""
    return [i for i in infos if i.reasons and not is_leftover_of(i, own_guids)]


def gate(infos: list[DiskInfo], own_guids: set[str] | frozenset[str], consent: Consent, sandbox: bool) -> None:
    """Refuse (DisksRefused, exit 10) unless every disk may be written as the user allowed."""
    foreign = foreign_disks(infos, own_guids)
    if sandbox and foreign:
        raise DisksRefused("files in the sandbox directory that zfslab did not leave there (nothing was "
                           "written):\n  " + "\n  ".join(refusal_lines(foreign))
                           + "\nremove them or choose another --sandbox directory")
    check_wipe_allowed(foreign, wipe=consent.wipe, confirmed_serials=set(consent.serials))


def wiped_first(infos: list[DiskInfo], own_guids: set[str] | frozenset[str], consent: Consent,
                sandbox: bool) -> tuple[str, ...]:
    """The disks a plan wipes before its first pool: those holding data whose serials were confirmed."""
    if sandbox:
        return ()
    return tuple(i.given for i in foreign_disks(infos, own_guids) if consent.confirms(i))


@dataclass(frozen=True)
class GateVerdict:
    """What the gate would do, said without asking: exit code 0 (go ahead) or 10, and why."""

    exit_code: int
    message: str  # for stderr; empty when every disk is empty


def dry_run_verdict(infos: list[DiskInfo], own_guids: set[str] | frozenset[str], consent: Consent,
                    sandbox: bool) -> GateVerdict:
    foreign = foreign_disks(infos, own_guids)
    if not foreign:
        return GateVerdict(0, "")
    lines = "\n  " + "\n  ".join(refusal_lines(foreign))
    if not sandbox and all(consent.confirms(i) for i in foreign):
        return GateVerdict(0, "these disks hold data and the run would wipe them first (--wipe, serials confirmed):"
                           + lines)
    if not sandbox and consent.wipe and consent.will_ask:
        return GateVerdict(0, "these disks hold data; the run would ask for their serial numbers, then wipe them:"
                           + lines)
    return GateVerdict(10, "these disks would be refused (nothing was written):" + lines)
