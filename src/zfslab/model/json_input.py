"""JSON a user hands zfslab (a saved `footprint --json`, stored options), read with bounds.

Python's json module takes any depth until the interpreter's recursion limit (a RecursionError),
a float too large for a double as inf (`1e400`), NaN and Infinity (not JSON at all), and an
integer of any length, which int() then refuses at 4,300 digits (a ValueError of its own). Here
every one of those is refused with the same error naming the value: at most MAX_DEPTH levels of
arrays and objects, integers of at most MAX_INT_DIGITS digits, floats finite after parsing.
Pure: the caller reads the file (docs/design.md, "Inputs from outside").
"""

from __future__ import annotations

import json
import math

from zfslab.errors import clip, shown

MAX_DEPTH = 32            # a saved footprint is 3 levels deep; stored options 1
MAX_INT_DIGITS = 20       # 2^64 has 20 digits: every count or size zfslab writes fits


class JsonInputError(ValueError):
    """Why the text is not JSON zfslab takes (one line, the bad value shown)."""


def _int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > MAX_INT_DIGITS:
        raise JsonInputError(f"the number {clip(text, 30)} has {len(digits):,} digits, more than {MAX_INT_DIGITS}")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):   # 1e400: beyond a double
        raise JsonInputError(f"the number {clip(text, 30)} is too large for a double")
    return value


def _constant(text: str):
    raise JsonInputError(f"{text} is not a JSON number")


def _depth(value: object, limit: int) -> int:
    """The nesting depth of a parsed value, walked without recursion (stops past `limit`)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def parse(text: str, *, max_depth: int = MAX_DEPTH) -> object:
    """The value of `text`, or JsonInputError: not JSON, too deep, or a number out of range."""
    try:
        value = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except JsonInputError:
        raise
    except RecursionError:   # deeper than the interpreter goes: far past max_depth
        raise JsonInputError(f"arrays or objects nested more than {max_depth} deep") from None
    except ValueError as e:   # json.JSONDecodeError among them: "Expecting value: line 1 column 1"
        raise JsonInputError(f"not JSON ({shown(str(e), 80)})") from None
    if _depth(value, max_depth) > max_depth:
        raise JsonInputError(f"arrays or objects nested more than {max_depth} deep")
    return value
