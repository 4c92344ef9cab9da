"""plan --db: whether the disks a plan is for are the disks its speed fit was measured on. A fit
on 2 × 1 GB SSDs carried to 6 × 4 TB HDDs predicts figures nothing measured, so the plan says
so in one line: what was measured, what is planned, and which of count, size and type differ.
Pure: the command gives what the run stored and what the user asked for (docs/speed.md#plan---db).
"""

from __future__ import annotations

from dataclasses import dataclass

from zfslab.model.units import format_bytes

# Disks of one nominal size differ by a few MB between vendors (4,000,787,030,016 and
# 4,000,225,165,312 bytes are both "4 TB"): within this share the size is the same.
SIZE_TOLERANCE = 0.02

# the built-in --disk-type presets and their kind; a profile-disk TOML does not say (None)
PRESET_ROTATIONAL = {"hdd": True, "hdd5400": True, "hdd-enterprise": True, "ssd": False, "nvme": False}


@dataclass(frozen=True, slots=True)
class DiskBasis:
    """Disks as a count, each size (bytes, largest first; () when not known: sandbox files) and
    their kind (True rotational, False solid-state, None not known)."""

    count: int
    sizes_bytes: tuple[int, ...]
    rotational: bool | None

    def text(self) -> str:
        if not self.sizes_bytes:
            size = f"{self.count} disks of unknown size"
        elif len(self.sizes_bytes) == 1:
            size = f"{self.count} × {format_bytes(self.sizes_bytes[0])}"
        else:
            size = f"{self.count} disks of {' and '.join(format_bytes(b) for b in self.sizes_bytes)}"
        kind = {True: " rotational", False: " solid-state", None: ""}[self.rotational]
        return size + kind


def differences(measured: DiskBasis, planned: DiskBasis) -> list[str]:
    """Which of count, size and type differ; a size or type not known on either side is not compared."""
    found = []
    if measured.count != planned.count:
        found.append("count")
    if measured.sizes_bytes and planned.sizes_bytes and not all(
            abs(p - m) <= SIZE_TOLERANCE * m for p in planned.sizes_bytes for m in measured.sizes_bytes):
        found.append("size")
    if measured.rotational is not None and planned.rotational is not None and measured.rotational != planned.rotational:
        found.append("type")
    return found


def mismatch_line(measured: DiskBasis, planned: DiskBasis) -> str | None:
    """One line when the planned disks differ from the measured ones, else None."""
    found = differences(measured, planned)
    if not found:
        return None
    what = found[0] if len(found) == 1 else ", ".join(found[:-1]) + " and " + found[-1]
    return (f"Speed fitted on other disks: measured on {measured.text()}, planned for {planned.text()} "
            f"({what} differ{'s' if len(found) == 1 else ''}); the speed figures carry the fit over, "
            "nothing measured them.")
