"""The one reader of numbers given as text (command-line flags, action inputs, LITMUS_* variables, litmus.yaml's
judge settings): finite, within the range the setting makes sense in, or a message saying what was expected.

`float()` reads "nan", "inf" and "1e400" (infinite) as numbers; a NaN compares false with every bound, so a
range check alone lets it through and every later comparison misbehaves (a NaN timeout failed each step).
"""

from __future__ import annotations

import argparse
import math


def parse_number(text: str, *, whole: bool, low: float, high: float, above_low: bool = False,
                 unit: str = "") -> int | float:
    """`text` as an int (`whole`) or a finite float from `low` (exclusive when `above_low`) to `high`;
    ValueError("expected …, got '…'") otherwise."""
    try:
        value: int | float = int(text.strip()) if whole else float(text)
    except ValueError:
        value = math.nan
    if math.isnan(value) or math.isinf(value) or value > high or (value <= low if above_low else value < low):
        kind = "a whole number" if whole else "a number"
        of = f" of {unit}" if unit else ""
        bound = f"above {_shown(low)}" if above_low else f"from {_shown(low)}"
        raise ValueError(f"expected {kind}{of} {bound} to {_shown(high)}, got {text!r}")
    return value


def number_argument(**bounds):
    """An argparse `type` reading a flag's value with `parse_number(text, **bounds)`: a bad value is a usage
    error naming the flag, before anything runs."""
    def parse(text: str) -> int | float:
        try:
            return parse_number(text, **bounds)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


def _shown(bound: float) -> str:
    return f"{int(bound):,}" if float(bound).is_integer() else f"{bound:g}"
