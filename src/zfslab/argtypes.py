"""argparse types for numbers from the command line: the right type, finite, within range,
and an error that names the option and the value."""

from __future__ import annotations

import argparse
import math


def number_arg(name: str, lo: float, hi: float, kind: type = int):
    """An argparse type: a number of `kind` within [lo, hi], with a message naming the option."""
    what = "a whole number" if kind is int else "a number"

    def parse(text: str):
        try:  # int() and float() also take other scripts' digits ('²', '١'): ASCII only
            value = kind(text) if text.isascii() else None
        except ValueError:
            value = None
        if value is None or (kind is float and not math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"{name} must be {what}, got {text!r}")
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{name} must be from {lo:g} to {hi:g}, got {value:g}")
        return value
    return parse


def int_arg(name: str, lo: int, hi: int):
    return number_arg(name, lo, hi, int)


def float_arg(name: str, lo: float, hi: float):
    return number_arg(name, lo, hi, float)
