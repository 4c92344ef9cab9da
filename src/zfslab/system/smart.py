"""What a disk says of its own past: how much was ever written to it and how long it was
powered on, from `smartctl -j -a` (smartmontools' JSON). A disk whose header was wiped may
hold data anywhere the emptiness sample does not read; a disk that has had more than a
factory test's writes (or hours) has been used, and the gate then wants the typed serial
numbers even when every sample reads zero (docs/safety.md#the-disks-own-history).

`parse_history` is pure (tested on tests/data/smartctl-*.json); `read_history` runs smartctl.
Every number taken from the report is checked: an integer (not a bool, not a float), in range;
anything else is left out and said, never trusted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from zfslab.model.pool_state import DiskHealth
from zfslab.system.runner import Runner

# A new disk's factory and burn-in tests write a little and run for hours; a disk someone used
# has had an operating system, a file copy or a pool: gigabytes and days. 8 GB is above the
# writes new disks report (from nothing to a few GB) and below any real use; 72 hours is three
# days of burn-in, less than a week in anyone's machine.
TRIVIAL_WRITTEN_BYTES = 8 * 10**9
TRIVIAL_POWER_ON_HOURS = 72
_MAX_BYTES = 1 << 62  # 4 EiB: more than any disk writes in its life, and within SQLite's integers
_MAX_HOURS = 1_000_000  # over a century
# ATA attributes that count host writes, by name (the units differ by vendor; a name says which)
_ATA_WRITTEN = {"Total_LBAs_Written": None, "Host_Writes_32MiB": 32 << 20, "Host_Writes_GiB": 1 << 30,
                "Lifetime_Writes_GiB": 1 << 30, "Total_Writes_GiB": 1 << 30}
_NVME_DATA_UNIT = 512_000  # NVMe counts data units of 1,000 512-byte blocks


@dataclass(frozen=True)
class DiskHistory:
    """What SMART said: bytes ever written and power-on hours (None: not reported), and what
    was not usable in the report (said in the inspection, never a refusal on its own)."""

    written_bytes: int | None
    power_on_hours: int | None
    problems: tuple[str, ...] = ()

    @property
    def used(self) -> bool:
        """More than a new disk's factory tests: written, or else (not reported) powered on."""
        if self.written_bytes is not None:
            return self.written_bytes > TRIVIAL_WRITTEN_BYTES
        return self.power_on_hours is not None and self.power_on_hours > TRIVIAL_POWER_ON_HOURS

    @property
    def reported(self) -> bool:
        return self.written_bytes is not None or self.power_on_hours is not None

    def text(self) -> str:
        parts = []
        if self.written_bytes is not None:
            parts.append(f"{self.written_bytes / 1e9:,.1f} GB ever written")
        if self.power_on_hours is not None:
            parts.append(f"{self.power_on_hours:,} power-on hours")
        return ", ".join(parts)


def _int(value, bound: int, what: str, problems: list[str]) -> int | None:
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= bound:
        problems.append(f"{what} {str(value)[:40]!r} is not a count")
        return None
    return value


def _scsi_gigabytes(value, problems: list[str]) -> int | None:
    """SCSI's error counter log gives gigabytes processed as a decimal string ("1234.567")."""
    if value is None:
        return None
    text = value if isinstance(value, str) else None
    try:
        gb = float(text) if text is not None and len(text) < 32 else None
    except ValueError:
        gb = None
    if gb is None or not 0 <= gb <= _MAX_BYTES / 1e9:  # also refuses nan and inf
        problems.append(f"gigabytes_processed {str(value)[:40]!r} is not a size")
        return None
    return int(gb * 1e9)


def parse_history(report: object) -> DiskHistory:
    """The history in one `smartctl -j -a` report (parsed JSON)."""
    if not isinstance(report, dict):
        return DiskHistory(None, None, ("smartctl's output is not a JSON object",))
    problems: list[str] = []
    hours = None
    power = report.get("power_on_time")
    if isinstance(power, dict):
        hours = _int(power.get("hours"), _MAX_HOURS, "power_on_time.hours", problems)
    written = None
    nvme = report.get("nvme_smart_health_information_log")
    if isinstance(nvme, dict):
        units = _int(nvme.get("data_units_written"), _MAX_BYTES // _NVME_DATA_UNIT, "data_units_written", problems)
        written = None if units is None else units * _NVME_DATA_UNIT
        if hours is None:
            hours = _int(nvme.get("power_on_hours"), _MAX_HOURS, "power_on_hours", problems)
    attributes = report.get("ata_smart_attributes")
    table = attributes.get("table") if isinstance(attributes, dict) else None
    for row in table if isinstance(table, list) else ():
        if not isinstance(row, dict) or not isinstance(row.get("name"), str) or row["name"] not in _ATA_WRITTEN:
            continue
        unit = _ATA_WRITTEN[row["name"]]
        if unit is None:  # counted in logical blocks
            unit = _int(report.get("logical_block_size", 512), 1 << 16, "logical_block_size", problems)
        raw = row.get("raw")
        count = _int(raw.get("value") if isinstance(raw, dict) else None, _MAX_BYTES, row["name"], problems)
        if count is not None and unit:
            written = count * unit if count * unit <= _MAX_BYTES else None
            if written is None:
                problems.append(f"{row['name']} {count} is more than any disk writes")
        break
    scsi = report.get("scsi_error_counter_log")
    if written is None and isinstance(scsi, dict) and isinstance(scsi.get("write"), dict):
        written = _scsi_gigabytes(scsi["write"].get("gigabytes_processed"), problems)
    return DiskHistory(written, hours, tuple(problems))


def read_history(runner: Runner, device: str) -> tuple[DiskHistory | None, str]:
    """(the history, or None when it could not be read; a note when the evidence is weaker)."""
    if runner.which("smartctl") is None:
        return None, "smartctl is not installed (smartmontools): the disk's history was not read"
    done = runner.run(["smartctl", "-j", "-a", device], timeout_s=60, check=False)
    try:
        report = json.loads(done.stdout) if len(done.stdout) < 4 << 20 else None
    except ValueError:
        report = None
    if report is None:
        return None, "smartctl gave no JSON report: the disk's history was not read"
    history = parse_history(report)
    if history.problems:
        return history, "smartctl reported values left out, the history is weaker: " + "; ".join(history.problems)
    if not history.reported:
        return history, "the disk reports no history (no SMART counters, e.g. a virtual disk)"
    return history, ""


# ATA attribute ids of the counters the disk findings read (smartmontools' drivedb names them so)
_ATA_HEALTH = {5: "reallocated", 197: "pending", 198: "offline_uncorrectable", 187: "reported_uncorrect"}
_MAX_COUNT = 1 << 48  # more sectors than a disk has: a raw value past it is a vendor's packed field


def parse_health(device: str, report: object) -> DiskHealth:
    """The health counters in one `smartctl -j -a` report (parsed JSON); a value that is not a count
    is left out (None), never trusted."""
    problems: list[str] = []  # parse_history says them; here a bad value is only left out
    if not isinstance(report, dict):
        return DiskHealth(device)
    fields: dict[str, object] = {}
    status = report.get("smart_status")
    if isinstance(status, dict) and isinstance(status.get("passed"), bool):
        fields["passed"] = status["passed"]
    attributes = report.get("ata_smart_attributes")
    table = attributes.get("table") if isinstance(attributes, dict) else None
    for row in table if isinstance(table, list) else ():
        # an id of another type (a list, a dict) is no attribute: `in` would raise on an unhashable one
        if isinstance(row, dict) and type(row.get("id")) is int and row["id"] in _ATA_HEALTH \
                and isinstance(row.get("raw"), dict):
            fields[_ATA_HEALTH[row["id"]]] = _int(row["raw"].get("value"), _MAX_COUNT, str(row["id"]), problems)
    defects = report.get("scsi_grown_defect_list")
    if "reallocated" not in fields and defects is not None:
        fields["reallocated"] = _int(defects, _MAX_COUNT, "scsi_grown_defect_list", problems)
    nvme = report.get("nvme_smart_health_information_log")
    if isinstance(nvme, dict):
        fields["media_errors"] = _int(nvme.get("media_errors"), _MAX_COUNT, "media_errors", problems)
        fields["critical_warning"] = _int(nvme.get("critical_warning"), 255, "critical_warning", problems)
        fields["percentage_used"] = _int(nvme.get("percentage_used"), 255, "percentage_used", problems)
        spare = _int(nvme.get("available_spare"), 100, "available_spare", problems)
        floor = _int(nvme.get("available_spare_threshold"), 100, "available_spare_threshold", problems)
        if spare is not None and floor is not None:
            fields["spare_below_threshold"] = spare < floor
    temperature = report.get("temperature")
    if isinstance(temperature, dict):
        fields["temperature_c"] = _int(temperature.get("current"), 200, "temperature", problems)
    fields.update(_power_on(report, nvme))
    model = report.get("model_name")
    if model is None and isinstance(report.get("scsi_vendor"), str) and isinstance(report.get("scsi_product"), str):
        model = f"{report['scsi_vendor']} {report['scsi_product']}"  # SCSI: smartctl 7.3 has no model_name
    if isinstance(model, str) and model.isprintable():
        fields["model"] = model.strip()[:80]
    return DiskHealth(device, **fields)


def _power_on(report: dict, nvme: object) -> dict[str, object]:
    """Power-on hours as SMART gave them: any whole number (the age model judges the range and says why
    it ignores one); something else is left out with the reason."""
    power = report.get("power_on_time")
    hours = power.get("hours") if isinstance(power, dict) else None
    if hours is None and isinstance(nvme, dict):
        hours = nvme.get("power_on_hours")
    if hours is None or type(hours) is int:
        return {"power_on_hours": hours}
    return {"power_on_note": f"SMART power-on hours {str(hours)[:40]!r} is not a whole number: ignored"}


def whole_disk(leaf: str) -> str:
    """The disk a pool's leaf is on: by-id '...-part1' -> '...', /dev/sda1 -> /dev/sda, nvme0n1p1 -> nvme0n1
    (smartctl asks the device, not a partition)."""
    if "/by-id/" in leaf or "/by-path/" in leaf or "/by-vdev/" in leaf:
        return re.sub(r"-part[0-9]+$", "", leaf)
    m = re.fullmatch(r"(/dev/(?:nvme[0-9]+n[0-9]+|mmcblk[0-9]+))p[0-9]+", leaf)
    if m:
        return m.group(1)
    m = re.fullmatch(r"(/dev/(?:sd|vd|xvd|hd)[a-z]+)[0-9]+", leaf)
    return m.group(1) if m else leaf


def read_health(runner: Runner, device: str) -> DiskHealth | None:
    """The disk's health counters, or None when smartctl is missing or gave no JSON report. smartctl's
    exit status is a bit field (a failing disk sets bits) and is not a failure here."""
    if runner.which("smartctl") is None:
        return None
    done = runner.run(["smartctl", "-j", "-a", device], timeout_s=60, check=False)
    try:
        report = json.loads(done.stdout) if len(done.stdout) < 4 << 20 else None
    except (ValueError, RecursionError):
        report = None
    return None if report is None else parse_health(device, report)
