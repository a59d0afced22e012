"""Display helpers shared by pages and charts: numbers with decimal SI prefixes."""

from __future__ import annotations

_PREFIXES = (
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
    (1e-3, "m"),
    (1e-6, "µ"),
    (1e-9, "n"),
    (1e-12, "p"),
)


def si(value: float, unit: str) -> str:
    """A value with a decimal SI prefix and 3 significant figures: si(3.65e-7, "s") -> "365 ns"."""
    if value == 0:
        return f"0 {unit}"
    for size, prefix in _PREFIXES:
        if abs(value) >= size * 0.9995:
            return f"{value / size:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def binary_bytes(value: float) -> str:
    """Bytes with a binary prefix, as caches and register files are sized: 262,144 -> "256 KiB"."""
    for size, prefix in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if abs(value) >= size:
            scaled = value / size
            # 1,000 to 1,023 of a unit: ".3g" would print "1.02e+03"
            return f"{scaled:,.0f} {prefix}" if abs(scaled) >= 1000 else f"{scaled:.3g} {prefix}"
    return f"{value:.3g} B"
