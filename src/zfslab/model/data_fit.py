"""plan --data-from's figures: the user's data (model/footprint.py's DataBlocks) on each layout of
a plan, how many times it fits and what is free after it (docs/footprint.md)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from zfslab.errors import ParamError
from zfslab.model.footprint import Compression, DataBlocks, data_footprint, floors_to_alloc
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.plan import PlanRow


@dataclass(frozen=True, slots=True)
class DataFit:
    used_bytes: float       # zfs list USED the data takes on this layout
    fits_times: float
    free_after_bytes: float
    room: bool              # usable >= used x (1 + growth)


def data_fits(rows: Iterable[PlanRow], data: DataBlocks, *, ashift: int, zfs_version: str,
              growth: float = 0.0) -> dict[str, DataFit]:
    """Per plan row's layout: the data's USED (data blocks and estimated metadata) and the fit;
    `growth` the share (0.5: 50 %) the data must have room to grow by."""
    if not growth >= 0:
        raise ParamError("growth", repr(growth), "give a share of 0 or more, e.g. 0.5 for 50 %")
    comp = Compression(on=data.compression != "off", floor_to_alloc=floors_to_alloc(zfs_version))
    out = {}
    for r in rows:
        used = data_footprint(data, parse_layout(r.layout), ashift, comp).total_used_bytes
        out[r.layout] = DataFit(used, r.usable_bytes / used if used else float("inf"), r.usable_bytes - used,
                                r.usable_bytes >= used * (1 + growth))
    return out
