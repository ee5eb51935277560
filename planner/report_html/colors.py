"""Text colour on a coloured fill: whichever of near-black and white reads better (WCAG 2.1
relative luminance and contrast ratio, https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio)."""

from __future__ import annotations

DARK_INK, LIGHT_INK = "#000000", "#ffffff"


def luminance(hex_color: str) -> float:
    """WCAG relative luminance of a #rrggbb colour, 0 (black) to 1 (white)."""
    channels = [int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two colours, 1 to 21."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def ink_on(fill: str) -> str:
    return max((DARK_INK, LIGHT_INK), key=lambda ink: contrast(ink, fill))
