"""The report's charts as inline SVG: grouped vertical bars and overlaid horizontal bars.

Drawn by hand because two kinds of bar chart take less code than inlining a chart library, and an
SVG needs no script and fetches nothing. Every label is escaped here, so callers pass crawled text
as it is.
"""

from __future__ import annotations

import math
from html import escape

WIDTH, HEIGHT = 640, 250
LEFT, RIGHT, TOP, BOTTOM = 44, 10, 34, 40
COLOURS = ("#a0aec0", "#2b6cb0", "#dd6b20")  # first series (before), second (after), third
MARKER = "#c53030"
MAX_LABELS = 12  # x labels shown at most; the others are thinned out
LABEL_CHARS = 48


def bars(title: str, categories: list[str], series: dict[str, list[float]], markers: dict[str, float] | None = None) -> str:
    """Side-by-side bars per category; a marker is a dashed line at a position counted in categories from the left."""
    top = _ceiling(max((value for values in series.values() for value in values), default=0))
    width, height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = width / max(len(categories), 1)
    bar = slot * 0.8 / max(len(series), 1)
    parts = [_open(title, WIDTH, HEIGHT), *_legend(series), *_grid(top, height, width)]
    for k, (name, values) in enumerate(series.items()):
        for i, value in enumerate(values):
            x, size = LEFT + slot * (i + 0.1) + bar * k, height * value / top
            parts.append(f'<rect x="{x:.1f}" y="{TOP + height - size:.1f}" width="{bar:.1f}" height="{size:.1f}" '
                         f'fill="{COLOURS[k]}"><title>{escape(name)}, {escape(categories[i])}: {value:g}</title></rect>')
    step = math.ceil(len(categories) / MAX_LABELS)
    for i in range(0, len(categories), step):
        parts.append(f'<text x="{LEFT + slot * (i + 0.5):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">'
                     f'{escape(categories[i])}</text>')
    for label, position in (markers or {}).items():
        x = LEFT + slot * position
        parts.append(f'<line x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{TOP + height}" stroke="{MARKER}" '
                     f'stroke-dasharray="4 3"/><text x="{x + 3:.1f}" y="{TOP + 8}" fill="{MARKER}">{escape(label)}</text>')
    return "".join(parts) + "</svg>"


def hbars(title: str, labels: list[str], series: dict[str, list[float]]) -> str:
    """One row per label, the series' bars drawn over one another (pass the longest first)."""
    row, label_width = 22, 300
    height = TOP + row * len(labels) + 8
    top = max((value for values in series.values() for value in values), default=0) or 1
    scale = (WIDTH - label_width - RIGHT - 30) / top
    parts = [_open(title, WIDTH, height), *_legend(series)]
    for i, label in enumerate(labels):
        y = TOP + row * i
        short = label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "\u2026"
        parts.append(f'<text x="{label_width - 6}" y="{y + 15}" text-anchor="end">{escape(short)}<title>{escape(label)}</title></text>')
        for k, (name, values) in enumerate(series.items()):
            parts.append(f'<rect x="{label_width}" y="{y + 3}" width="{values[i] * scale:.1f}" height="{row - 6}" '
                         f'fill="{COLOURS[k]}"><title>{escape(name)}: {values[i]:g}</title></rect>')
        parts.append(f'<text x="{label_width + max(values[i] for values in series.values()) * scale + 4:.1f}" y="{y + 15}">'
                     f'{" / ".join(f"{values[i]:g}" for values in series.values())}</text>')
    return "".join(parts) + "</svg>"


def _open(title: str, width: int, height: int) -> str:
    return (f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{escape(title)}"><title>{escape(title)}</title>')


def _legend(series: dict[str, list[float]]) -> list[str]:
    parts, x = [], LEFT
    for k, name in enumerate(series):
        parts.append(f'<rect x="{x}" y="6" width="12" height="12" fill="{COLOURS[k]}"/>'
                     f'<text x="{x + 16}" y="16">{escape(name)}</text>')
        x += 28 + 7 * len(name)
    return parts


def _grid(top: float, height: float, width: float) -> list[str]:
    parts = []
    for tick in (0, top / 2, top):
        y = TOP + height * (1 - tick / top)
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + width}" y2="{y:.1f}" stroke="#e2e8f0"/>'
                     f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>')
    return parts


def _ceiling(value: float) -> float:
    """The axis top: the smallest 1, 2 or 5 times a power of ten at or above the value (2 at least, for whole halves)."""
    if value <= 2:
        return 2
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= value)
