"""One description of a kind of disk for every model: its speed and its failure figures.

Before, `--disk-class` (risk: AFR, read-error rate, a 150 MB/s disk) and `--disk-model` (speed: a
220 MB/s disk) could describe two different disks. A DiskType holds both, and the risk model's
resilver ceiling is the speed profile's own streaming rate (docs/reliability.md#disk-types).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from zfslab.errors import InputError, shown
from zfslab.model.performance import PRESETS, DiskProfile


@dataclass(frozen=True, slots=True)
class DiskType:
    name: str
    speed: DiskProfile
    afr: float  # annualised failure rate, a fraction
    ber_per_bit: float  # unrecoverable read errors per bit read
    source: str

    @property
    def streaming_mb_s(self) -> float:
        """Sequential write MB/s averaged over the platter (outer to inner zone, linear): what a
        resilver of a full disk can sustain at best. Flash has one zone."""
        return self.speed.seq_write_mb_s * (1 + self.speed.inner_fraction) / 2


# Failure figures: Backblaze Drive Stats (fleet AFR 1.57 % in 2024, 1.55 % in Q3 2025); BER from
# data sheets (consumer 1e-14, enterprise 1e-15, flash UBER 1e-17); flash AFR ~1 % (Backblaze's SSD
# boot drives; an assumption). Speeds: docs/speed.md#presets.
_ENTERPRISE = replace(PRESETS["hdd7200"], name="hdd-enterprise", seq_read_mb_s=270.0, seq_write_mb_s=270.0,
                      source="7200 rpm enterprise 3.5\" (Exos X18 data sheet: 270 MB/s outer zone)")
DISK_TYPES = {
    t.name: t for t in (
        DiskType("hdd", PRESETS["hdd7200"], 0.015, 1e-14, "7200 rpm NAS disk; Backblaze fleet AFR; consumer BER"),
        DiskType("hdd5400", PRESETS["hdd5400"], 0.015, 1e-14, "5400-5900 rpm NAS disk; Backblaze AFR; consumer BER"),
        DiskType("hdd-enterprise", _ENTERPRISE, 0.015, 1e-15, "7200 rpm enterprise disk; Backblaze AFR; BER 1e-15"),
        DiskType("ssd", PRESETS["ssd"], 0.01, 1e-17, "SATA SSD; ~1 % AFR (assumed); data-sheet UBER"),
        DiskType("nvme", PRESETS["nvme"], 0.01, 1e-17, "PCIe 3.0 NVMe; ~1 % AFR (assumed); data-sheet UBER"),
    )
}
ALIASES = {"hdd7200": "hdd"}  # the former --disk-model name
DEFAULT_DISK_TYPE = "hdd"


def from_profile(speed: DiskProfile, *, afr: float | None = None, ber_per_bit: float | None = None) -> DiskType:
    """A measured speed profile (profile-disk's TOML) as a disk type; failure figures it lacks are
    those of the preset of its medium: a disk that seeks (under 1,000 random reads a second) is an
    hdd, anything faster an ssd."""
    base = DISK_TYPES["hdd" if speed.rand_read_iops_qd1 < 1000 else "ssd"]
    return DiskType(speed.name, speed, base.afr if afr is None else afr,
                    base.ber_per_bit if ber_per_bit is None else ber_per_bit,
                    f"measured speed ({speed.source or speed.name}); failure figures "
                    + ("from the profile" if afr is not None and ber_per_bit is not None else f"of the {base.name} preset"))


def named_disk_type(text: str) -> DiskType | None:
    """The preset a name gives, whatever its case (SSD, HDD) and by its older names too; None for others."""
    name = ALIASES.get(text, text)
    if name.lower() in DISK_TYPES or ALIASES.get(name.lower()) in DISK_TYPES:
        name = ALIASES.get(name.lower(), name.lower())
    return DISK_TYPES.get(name)


# a profile's own failure figures: key, lowest, highest (the --afr and --ber ranges)
FAILURE_KEYS = (("afr_pct", 0.0001, 99.9), ("ber_per_bit", 0.0, 1e-3))


def failure_figures(data: Mapping[str, object]) -> tuple[float | None, float | None]:
    """A profile's optional afr_pct and ber_per_bit: (AFR as a fraction, BER per bit), None where
    absent; InputError names the key and its value when one is no number in range."""
    found = []
    for key, lo, hi in FAILURE_KEYS:
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or not lo <= value <= hi):
            raise InputError(f"{key} = {shown(str(value), 40)}: give a number from {lo:g} to {hi:g}")
        found.append(value)
    afr_pct, ber = found
    return (None if afr_pct is None else afr_pct / 100), ber
