"""--disk-price: one price for every disk, or one per size, read into model/cost.py's DiskPrices and
checked against the plan's disks; one-line errors that name the value and the fix."""

from __future__ import annotations

import math
import re

from zfslab.errors import UsageError, ZfslabError, clip
from zfslab.model.cost import DiskPrices
from zfslab.model.units import format_bytes, parse_size

EXAMPLE = "e.g. --disk-price 250, or one per size: --disk-price 12TB=250,8TB=150"
_NUMBER = re.compile(r"\d+(\.\d+)?|\.\d+")


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
