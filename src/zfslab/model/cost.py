"""What the disks cost: one price per disk, in whatever currency the buyer counts (the number is
never converted or labelled), and from it each layout's price per usable TB (docs/recommend.md#7-cost).
Reading --disk-price is the command layer's: commands/_prices.py."""

from __future__ import annotations

import math
from dataclasses import dataclass

from zfslab.model.layouts import Layout


@dataclass(frozen=True, slots=True)
class DiskPrices:
    """The price of one disk, for every size (disk_bytes None) or per size in bytes."""

    by_size: tuple[tuple[int | None, float], ...]

    def __post_init__(self) -> None:
        if not self.by_size:
            raise ValueError("by_size: at least one price")
        sizes = [b for b, _ in self.by_size]
        if len(set(sizes)) != len(sizes) or (None in sizes and len(sizes) > 1):
            raise ValueError(f"by_size={self.by_size!r}: one price per size, or one for every size")
        for b, price in self.by_size:
            if not (math.isfinite(price) and price > 0):
                raise ValueError(f"price(={price!r}) must be a finite number > 0")

    def of(self, disk_bytes: int) -> float | None:
        for b, price in self.by_size:
            if b is None or b == disk_bytes:
                return price
        return None

    def layout_price(self, disk_counts: dict[int, int]) -> float | None:
        """The price of the disks a layout uses ({bytes of a disk: how many}); None if one size has no price."""
        prices = [self.of(b) for b in disk_counts]
        if any(p is None for p in prices):
            return None
        return sum(p * n for p, n in zip(prices, disk_counts.values()))


def disk_counts(layout: Layout, disk_bytes: int) -> dict[int, int]:
    """{bytes of a disk: how many} of the plan's disks the layout uses, hot spares included (special,
    dedup, log and cache disks are beside the plan's disks and not priced)."""
    if layout.sized:
        return layout.disk_sizes()
    return {disk_bytes: layout.disks}


def money(value: float) -> str:
    """A price in no currency: two decimals below 100, whole above: '31.35', '1,250'."""
    return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"
