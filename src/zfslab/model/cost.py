"""What the disks cost: one price per disk, in whatever currency the buyer counts (the number is
never converted or labelled), and from it each layout's price per usable TB (docs/recommend.md#7-cost)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from zfslab.errors import UsageError, ZfslabError, clip
from zfslab.model.layouts import Layout
from zfslab.model.units import format_bytes, parse_size

EXAMPLE = "e.g. --disk-price 250, or one per size: --disk-price 12TB=250,8TB=150"
_NUMBER = re.compile(r"\d+(\.\d+)?|\.\d+")


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


def parse_disk_prices(text: str) -> DiskPrices:
    """'250' (every disk) or '12TB=250,8TB=150' (per size); a one-line error naming the value and the fix."""
    def bad(why: str) -> UsageError:
        return UsageError(f"--disk-price {clip(text)}: {why}; {EXAMPLE}")

    def price(word: str) -> float:
        word = word.strip()
        which = "not a price" if word == str(text).strip() else f"{clip(word)} is not a price"
        if not _NUMBER.fullmatch(word):
            raise bad(f"{which}: a plain number above 0, no currency sign")
        value = float(word)
        if not (math.isfinite(value) and value > 0):
            raise bad(f"{which}: a plain number above 0")
        return value

    parts = [p for p in str(text).split(",")]
    if len(parts) == 1 and "=" not in parts[0]:
        return DiskPrices(((None, price(parts[0])),))
    out: dict[int, float] = {}
    for part in parts:
        size_text, sep, value = part.partition("=")
        if not sep:
            raise bad(f"{clip(part.strip())} names no size: write SIZE=PRICE for each size, no thousands separator")
        try:
            size = parse_size(size_text.strip())
        except ZfslabError:
            raise bad(f"{clip(size_text.strip())} is not a disk size") from None
        if size in out:
            raise bad(f"{format_bytes(size)} is priced twice")
        out[size] = price(value)
    return DiskPrices(tuple(out.items()))


def check_prices(prices: DiskPrices, sizes: dict[int, int], given: str) -> None:
    """Every size of the plan's disks has a price, and every price a size of the plan."""
    have = ", ".join(format_bytes(b) for b in sizes)
    if prices.by_size[0][0] is None:
        if len(sizes) > 1:
            example = ",".join(f"{format_bytes(b).replace(' ', '').replace('.00', '')}=PRICE" for b in sizes)
            raise UsageError(f"--disk-price {clip(given)}: the disks have several sizes ({have}); give one price per "
                             f"size, e.g. --disk-price {example}")
        return
    for b, _ in prices.by_size:
        if b not in sizes:
            raise UsageError(f"--disk-price {clip(given)}: the plan has no {format_bytes(b)} disks (it has {have}); "
                             f"price the sizes it has")
    missing = [b for b in sizes if prices.of(b) is None]
    if missing:
        raise UsageError(f"--disk-price {clip(given)}: no price for the {format_bytes(missing[0])} disks; "
                         f"add {format_bytes(missing[0]).replace(' ', '').replace('.00', '')}=PRICE")


def disk_counts(layout: Layout, disk_bytes: int) -> dict[int, int]:
    """{bytes of a disk: how many} of the plan's disks the layout uses, hot spares included (special,
    dedup, log and cache disks are beside the plan's disks and not priced)."""
    if layout.sized:
        return layout.disk_sizes()
    return {disk_bytes: layout.disks}


def money(value: float) -> str:
    """A price in no currency: two decimals below 100, whole above: '31.35', '1,250'."""
    return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"
