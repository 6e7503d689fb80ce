"""How a difference and its interval are printed: as many decimals as two significant digits need, so a
small effect never prints as zero. One home for the reports and the evidence records."""

from __future__ import annotations


def decimals(value: float, at_least: int = 2, at_most: int = 6) -> int:
    """Decimals that show a nonzero finite ``value`` with two significant digits (``at_least`` /
    ``at_most`` bound it): a loss difference of 0.003 printed as 0.00 would read as zero."""
    import math

    if value != value or value in (0, math.inf, -math.inf):
        return at_least
    return min(max(at_least, 1 - math.floor(math.log10(abs(value)))), at_most)


def number_text(value: float, sign: bool = False) -> str:
    """``value`` with :func:`decimals` (``sign``: always a + or −)."""
    return f"{value:{'+' if sign else ''}.{decimals(value)}f}"


def interval_text(lo: float, hi: float) -> str:
    """``[lo, hi]``, each bound with the decimals it needs (:func:`number_text`): an interval that
    excludes 0 never prints as ``[-0.00, -0.00]``."""
    return f"[{number_text(lo)}, {number_text(hi)}]"
