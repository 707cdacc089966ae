"""Exact decimal arithmetic and the shortest exact written form of a number.

Scores are averaged as decimals, not floats, so a report's bytes do not depend on summation
order or binary noise; the table and the page share `num` so they print the same digits.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext

_FOUR_PLACES = Decimal("0.0001")


def dec(value: float | int) -> Decimal:
    # repr() is the shortest round-tripping form, so 0.1 stays 0.1 instead of its binary tail.
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _round4(value: Decimal) -> float:
    return float(value.quantize(_FOUR_PLACES, rounding=ROUND_HALF_UP))


def mean(values: Sequence[float | int]) -> float | None:
    if not values:
        return None
    with localcontext(Context(prec=60)):
        return _round4(sum((dec(v) for v in values), Decimal(0)) / len(values))


def median(values: Sequence[float | int]) -> float | None:
    if not values:
        return None
    ordered = sorted(dec(v) for v in values)
    mid = len(ordered) // 2
    with localcontext(Context(prec=60)):
        middle = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
        return _round4(middle)


def num(value: float | int | None) -> str:
    """Shortest exact form: 0.5 not 0.5000, 1 not 1.0, so columns stay narrow."""
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    return format(dec(value).normalize(), "f")
