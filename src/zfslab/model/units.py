"""Byte sizes: parsing what users type, printing what vendors and `zfs list` print."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

from zfslab.errors import SizeError, clip

KiB, MiB, GiB, TiB, PiB = (1 << 10), (1 << 20), (1 << 30), (1 << 40), (1 << 50)
KB, MB, GB, TB, PB = 10**3, 10**6, 10**9, 10**12, 10**15

_UNITS = {
    "": 1, "B": 1,
    "KB": KB, "MB": MB, "GB": GB, "TB": TB, "PB": PB,
    "KIB": KiB, "MIB": MiB, "GIB": GiB, "TIB": TiB, "PIB": PiB,
}
_SIZE_RE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)\s*", re.ASCII)
MAX_SIZE = 2**64 - 1  # ZFS counts bytes in 64 bits


def parse_size(text: str) -> int:
    """Bytes from '4TB' (10^12), '3.64TiB' (2^40), '4000787030016'; a fraction is truncated."""
    m = _SIZE_RE.fullmatch(str(text))
    if not m or len(m.group(1)) > 40:
        raise SizeError(clip(text)[1:-1], "write a number with a unit, e.g. 4TB, 3.64TiB or 4000787030016")
    number, unit = m.group(1), m.group(2).upper()
    if unit in ("K", "M", "G", "T", "P"):
        raise SizeError(text, f"'{unit}' is ambiguous: write {number}{unit}B (10^n) or {number}{unit}iB (2^n)")
    if unit not in _UNITS:
        raise SizeError(text, "units are B, KB, MB, GB, TB, PB (powers of 10) or KiB, MiB, GiB, TiB, PiB")
    try:
        value = int(Decimal(number) * _UNITS[unit])
    except InvalidOperation:  # pragma: no cover - the regex admits only numbers
        raise SizeError(text, "not a number") from None
    if value <= 0:
        raise SizeError(text, "a size must be more than 0 bytes")
    if value > MAX_SIZE:
        raise SizeError(text, "ZFS counts at most 2^64 - 1 bytes (16 EiB)")
    return value


# ASCII only and finite: float() also takes '١٢', '1_0', 'nan', 'inf' and '1e400' (= inf)
FLOAT_RE = re.compile(r"\s*[+-]?(?:[0-9]{1,30}(?:\.[0-9]{0,30})?|\.[0-9]{1,30})(?:[eE][+-]?[0-9]{1,4})?\s*", re.ASCII)


def parse_blocksize(text: str) -> int:
    """Bytes of a ZFS block size such as recordsize: '128K', '1M', '16384'; K/M mean 2^10/2^20 as in zfs."""
    m = re.fullmatch(r"\s*([0-9]{1,9})\s*([KkMm]?)(?:i?B)?\s*", str(text), re.ASCII)
    if not m:
        raise SizeError(text, "write a power of two from 512 to 16M, e.g. 16K, 128K or 1M")
    value = int(m.group(1)) * {"": 1, "K": KiB, "M": MiB}[m.group(2).upper()]
    if value < 512 or value > 16 * MiB or value & (value - 1):
        raise SizeError(text, "a block size is a power of two from 512 to 16M, e.g. 16K, 128K or 1M")
    return value


def parse_fio_size(text: str) -> int:
    """Bytes of a size as fio reads it: '4g', '512m', '1048576'; k/m/g/t are powers of 2 (kb_base=1024)."""
    m = re.fullmatch(r"\s*([0-9]{1,15})\s*([kKmMgGtT]?)(?:i?[bB])?\s*", str(text), re.ASCII)
    if not m or int(m.group(1)) == 0:
        raise SizeError(text, "write a whole number with k, m, g or t as fio does, e.g. 1g or 512m")
    return int(m.group(1)) * {"": 1, "K": KiB, "M": MiB, "G": GiB, "T": TiB}[m.group(2).upper()]


def zfs_nicenum(num: int) -> str:
    """The value as `zfs list` prints it: base 1024, at most 5 characters (zfs_nicenum_format)."""
    units = ["", "K", "M", "G", "T", "P", "E"]
    n, index = num, 0
    while n >= 1024 and index < len(units) - 1:
        n //= 1024
        index += 1
    if index == 0 or num % (1024**index) == 0:
        return f"{n}{units[index]}"
    text = ""
    for digits in (2, 1, 0):
        text = f"{num / 1024**index:.{digits}f}{units[index]}"
        if len(text) <= 5:
            break
    return text


def format_tb(num: int) -> str:
    """Vendor units: '86.56 TB'."""
    return f"{num / TB:,.2f} TB"


def format_tib(num: int) -> str:
    """Binary units, with the same two decimals: '78.71 TiB'."""
    return f"{num / TiB:,.2f} TiB"


def format_bytes(num: float) -> str:
    """A short human size in powers of 10, for messages: '4.00 TB', '512.00 MB'."""
    for unit, factor in (("PB", PB), ("TB", TB), ("GB", GB), ("MB", MB), ("KB", KB)):
        if abs(num) >= factor:
            return f"{num / factor:.2f} {unit}"
    return f"{num:.0f} B"


SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def power_of_ten(n: float) -> str:
    """A count of a million or more in two figures and a power of ten: '8.5×10⁶', '10¹²'."""
    exponent = math.floor(math.log10(n))
    mantissa = round(n / 10 ** exponent, 1)
    if mantissa >= 10:
        mantissa, exponent = 1.0, exponent + 1
    power = f"10{str(exponent).translate(SUPERSCRIPT)}"
    return power if mantissa == 1 else f"{mantissa:g}×{power}"


def odds(p: float | None) -> str:
    """A probability as a person reads it: '1 in 5,900', '1 in 3.2', '1 in 1.2×10⁷'; '0' and '-' for none.

    Two significant figures: the inputs (AFR, BER) are known to one or two at best. From a million
    up the count is a power of ten, never 'M'/'B'/'T' letters, which beside zfs list's '86.6T' read
    as bytes, and narrower than words (docs/recommend.md#6-how-figures-are-written)."""
    if p is None or not math.isfinite(p) or p < 0:
        return "-"
    if p == 0:
        return "0"
    n = 1 / p
    if n < 10:
        return f"1 in {n:.1f}"
    digits = math.floor(math.log10(n))
    n = round(n, 1 - digits)  # two significant figures
    if n >= 1e15:
        return "1 in >10¹⁵"
    if n >= 1e6:
        return f"1 in {power_of_ten(n)}"
    return f"1 in {n:,.0f}"
