"""Preflight on every host in parallel: what is installed and which disks the names point at,
read with programs that never write (zfslab --installed, zpool version, fio --version, lsblk), and
lsblk's JSON parsed here, as every program's output is parsed beside what runs it (docs/design.md#code-map).
model/preflight.py judges the answers (docs/fleet.md#preflight)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from zfslab.errors import ZfslabError, clip, one_line
from zfslab.model.inventory import Host
from zfslab.model.preflight import DiskFacts, HostFacts, refusals
from zfslab.system.fanout import DEFAULT_LIMIT, fan_out
from zfslab.system.installed import installed
from zfslab.system.transport import Transport

COMMAND_TIMEOUT_S = 60

# lsblk's columns preflight asks for (util-linux 2.33+; -b: sizes in bytes)
LSBLK_COLUMNS = "NAME,PATH,TYPE,SIZE,MODEL,SERIAL,ROTA,LOG-SEC,PHY-SEC"


class BadLsblk(ZfslabError):
    """host {}: lsblk printed {}, not the JSON zfslab asked for; is util-linux 2.33 or newer installed?"""

    exit_code = 4


def _int(value, what: str, host: str) -> int:
    if isinstance(value, bool) or not ((isinstance(value, int) and value >= 0)
                                       or (isinstance(value, str) and value.isascii() and value.isdigit())):
        raise BadLsblk(host, f"{what} = {clip(value)}")
    return int(value)


def _bool(value, what: str, host: str) -> bool:
    # util-linux 2.33-2.36 print "0"/"1", newer versions true/false
    if value in (True, False, "0", "1", 0, 1):
        return value in (True, "1", 1)
    raise BadLsblk(host, f"{what} = {clip(value)}")


def parse_lsblk(text: str, host: str) -> tuple[DiskFacts, ...]:
    """`lsblk -J -b -o LSBLK_COLUMNS DISK...` -> one DiskFacts per disk named, in lsblk's order."""
    try:
        data = json.loads(text)
        devices = data["blockdevices"]
    except (ValueError, KeyError, TypeError):
        raise BadLsblk(host, clip(text.strip(), 60)) from None
    if not isinstance(devices, list):
        raise BadLsblk(host, f"blockdevices = {clip(devices)}")
    out = []
    for d in devices:
        if not isinstance(d, dict) or not isinstance(d.get("path"), str):
            raise BadLsblk(host, f"a device {clip(d)}")
        model, serial = d.get("model"), d.get("serial")
        out.append(DiskFacts(d["path"], _int(d.get("size"), "size", host),
                             model.strip() if isinstance(model, str) and model.strip() else None,
                             serial.strip() if isinstance(serial, str) and serial.strip() else None,
                             _bool(d.get("rota"), "rota", host), _int(d.get("log-sec"), "log-sec", host),
                             _int(d.get("phy-sec"), "phy-sec", host)))
    return tuple(out)


def first_line(text: str) -> str | None:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line or None


def host_facts(transport: Transport, host: Host, disks: Sequence[str]) -> HostFacts:
    """One host's versions and the facts of the disks named (HostUnreachable if it cannot be reached)."""
    def answer(argv: list[str]) -> str | None:
        done = transport.run(host, argv, timeout_s=COMMAND_TIMEOUT_S, check=False)
        return done.stdout if done.returncode == 0 else None
    zfslab, digest, path = _installed(answer)
    zfs = answer(["zpool", "version"])
    fio = answer(["fio", "--version"])
    found, missing = [], []
    for disk in disks:   # one lsblk per disk: a missing one is named, and the order is ours
        text = answer(["lsblk", "-J", "-b", "-o", LSBLK_COLUMNS, "--nodeps", disk])
        if text is None:
            missing.append(disk)
        else:
            found += parse_lsblk(text, host.name)
    return HostFacts(host.name, zfslab, first_line(zfs or ""), first_line(fio or ""), tuple(found), tuple(missing),
                     digest, path)


def _installed(answer) -> tuple[str | None, str | None, str | None]:
    """The host's zfslab: (version, digest, path) from `zfslab --installed`; a zfslab without that
    flag answers `zfslab --version` only (digest and path None); (None, None, None): none there."""
    text = answer(["zfslab", "--installed"])
    if text is not None:
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and all(isinstance(data.get(k), str) for k in ("version", "digest")):
            path = data.get("path")
            return data["version"], data["digest"], one_line(path, 200) if isinstance(path, str) else None
    version = first_line(answer(["zfslab", "--version"]) or "")
    return (version.removeprefix("zfslab ").strip() if version else None), None, None


def controller_digest() -> str:
    """This machine's zfslab package digest, as each host's `zfslab --installed` computes its own."""
    return installed()["digest"]


def preflight(transport: Transport, hosts: Sequence[Host], disks: Sequence[str], *, controller_version: str,
              limit: int = DEFAULT_LIMIT) -> tuple[list[HostFacts], list[str]]:
    """Every host's facts and every refusal, one line each ([] refusals: all may start)."""
    outcomes = fan_out(hosts, lambda h: host_facts(transport, h, disks), limit=limit)
    facts = [o.value for o in outcomes if o.ok]
    lines = [str(o.error) for o in outcomes if not o.ok]
    return facts, lines + refusals(facts, controller_version=controller_version, controller_digest=controller_digest())
