"""Where each Gantt bar's label goes: inside its bar when it fits, else beside it in free space of
its row, else nowhere (the chart's key lists it, and the bar's tooltip names it). Labels are
placed largest job first, so the biggest bars always claim a place before the small ones."""

from __future__ import annotations

from dataclasses import dataclass

# Text is measured before a browser sees it, so widths are over-estimated from DejaVu Sans, the
# wide font Debian's Chromium falls back to for system-ui (advance widths in em from its
# DejaVuSans.ttf 2.37: "m" 0.974, "w" 0.818, digits 0.636, "a" 0.613, "r" 0.411, "-" 0.361,
# "i" 0.278; capitals 0.6-0.8; bold about 10% wider). Rounded up per class of character.
NARROW, SLIM, WIDE = frozenset("ijl.,:;'!|"), frozenset(" -()[]frt/"), frozenset("mwMW")
LABEL_FONT_PX = 11.0
BOLD_FACTOR = 1.1
PAD_PX = 4.0  # between a label and the edge of its bar or of a neighbour


@dataclass(frozen=True)
class Bar:
    """One job's bar in a Gantt row, in SVG x: `lead_x` is where its queue wait starts."""

    job: str
    texts: tuple[str, ...]  # what to write, longest first (e.g. with and without the GPU count)
    lead_x: float
    x0: float
    x1: float
    size: float  # GPU-hours: the order in which bars claim space


@dataclass(frozen=True)
class Label:
    text: str
    x: float
    anchor: str  # SVG text-anchor: start or end
    inside: bool


def text_width_px(text: str, font_px: float = LABEL_FONT_PX, bold: bool = False) -> float:
    """An upper bound on the text's rendered width, in px."""
    def em(ch: str) -> float:
        if not ch.isascii():
            return 1.0  # CJK and other scripts: a full em
        if ch in NARROW:
            return 0.33
        if ch in SLIM:
            return 0.43
        if ch in WIDE:
            return 1.0
        return 0.8 if ch.isupper() else 0.65

    return sum(em(ch) for ch in text) * font_px * (BOLD_FACTOR if bold else 1.0)


def place_labels(rows: list[list[Bar]], left_x: float, right_x: float) -> dict[str, Label]:
    """A label for every bar that has room for one, none overlapping a bar, another label or the
    lane names left of `left_x`; bars left out are absent from the result."""
    placed: dict[str, Label] = {}
    taken: dict[int, list[tuple[float, float]]] = {
        r: [(b.lead_x, b.x1) for b in row] for r, row in enumerate(rows)}
    order = sorted(((r, b) for r, row in enumerate(rows) for b in row), key=lambda rb: -rb[1].size)
    for r, bar in order:
        others = [span for span in taken[r] if span != (bar.lead_x, bar.x1)]
        label = _inside(bar, others) or _beside(bar, taken[r], left_x, right_x)
        if label is not None:
            placed[bar.job] = label
            if not label.inside:
                start = label.x if label.anchor == "start" else label.x - text_width_px(label.text)
                taken[r].append((start - PAD_PX, start + text_width_px(label.text) + PAD_PX))
    return placed


def _inside(bar: Bar, others: list[tuple[float, float]]) -> Label | None:
    """At the bar's start, when the text fits and no neighbour's queue wait reaches over it."""
    for text in bar.texts:
        end = bar.x0 + text_width_px(text) + 2 * PAD_PX
        if end <= bar.x1 and all(end <= lo or hi <= bar.x0 for lo, hi in others):
            return Label(text, bar.x0 + PAD_PX, "start", inside=True)
    return None


def _beside(bar: Bar, taken: list[tuple[float, float]], left_x: float,
            right_x: float) -> Label | None:
    """Right of the bar, else left of its queue wait, where nothing in the row is drawn yet."""
    def free(a: float, b: float) -> bool:
        return left_x <= a and b <= right_x and all(b <= lo or hi <= a for lo, hi in taken)

    for text in bar.texts:
        need = text_width_px(text) + PAD_PX
        if free(bar.x1, bar.x1 + need):
            return Label(text, bar.x1 + PAD_PX, "start", inside=False)
        if free(bar.lead_x - need, bar.lead_x):
            return Label(text, bar.lead_x - PAD_PX, "end", inside=False)
    return None
