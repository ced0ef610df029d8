"""Plots drawn as inline SVG: no plotting library, no external file, and every label escaped.

Some pictures read better than tables: the spread of a metric over seeds per model (is a lead larger than
the seed noise?), each model's Δ to the best with its interval beside chance and the papers (a forest plot), and
each model's accuracy on literal vs metaphorical items (the gap, and whether it has the same sign for every
model). Colours come from CSS classes, so the site's light and dark themes apply.
"""

from __future__ import annotations

import math
from html import escape

WIDTH = 720
LABEL_WIDTH = 220
RIGHT = 24
ROW = 28
TOP = 34
AXIS = 34
_MAX_LABEL = 30
#: A label character's width at the plots' 12 px system-ui, on the wide side (digits and lower case average
#: ~6.5 px; a few capitals and 'm'/'w' more), so a label sized by it is never cut at the picture's left edge.
CHAR_PX = 7.2


def text_width(text: str) -> float:
    """The width a label is given: its characters at ``CHAR_PX`` each."""
    return len(text) * CHAR_PX


def _label(text: str, room: float = _MAX_LABEL * CHAR_PX) -> str:
    """``text`` cut (with '…') to fit ``room`` pixels and at most ``_MAX_LABEL`` characters."""
    fits = min(_MAX_LABEL, int(room // CHAR_PX))
    return text if len(text) <= fits else text[: fits - 1] + "…"


def _scale(values: list[float]) -> tuple[float, float]:
    """The x range: [0, 1] for scores inside it (most metrics), else the data range padded by 5%."""
    low, high = min(values + [0.0]), max(values + [1.0])
    if low >= 0.0 and high <= 1.0:
        return 0.0, 1.0
    pad = (high - low) * 0.05 or 1.0
    return low - pad, high + pad


def _frame(n_rows: int, low: float, high: float, axis_label: str, title: str, legend: str = ""):
    """The SVG's opening, title, grid and x axis; returns the parts so far and the value-to-x function."""
    height = TOP + n_rows * ROW + AXIS
    plot = WIDTH - LABEL_WIDTH - RIGHT

    def x(value: float) -> float:
        return LABEL_WIDTH + (value - low) / (high - low) * plot

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        legend,
    ]
    bottom = TOP + n_rows * ROW
    for i in range(5):
        value = low + (high - low) * i / 4
        parts.append(f'<line class="grid" x1="{x(value):.1f}" y1="{TOP - 6}" x2="{x(value):.1f}" y2="{bottom}"/>')
        parts.append(f'<text class="tick" x="{x(value):.1f}" y="{bottom + 14}" text-anchor="middle">{value:.2f}</text>')
    parts.append(f'<text class="axis-label" x="{LABEL_WIDTH + plot / 2:.1f}" y="{bottom + 30}" text-anchor="middle">'
                 f"{escape(axis_label)}</text>")
    return parts, x


def seed_strip(series: list[dict], *, axis_label: str, title: str) -> str:
    """One row per model: a dot per seed, a bar for the mean and a line for mean ± std.

    ``series``: [{"label": str, "values": [float], "mean": float, "std": float}], best first.
    """
    values = [v for s in series for v in s["values"]]
    if not values:
        return ""
    low, high = _scale(values)
    parts, x = _frame(len(series), low, high, axis_label, title)
    for row, s in enumerate(series):
        y = TOP + row * ROW + ROW / 2
        parts.append(f'<g class="series"><title>{escape(s["label"])}: mean {s["mean"]:.4f} ± {s["std"]:.4f} '
                     f'over {len(s["values"])} seed(s)</title>')
        parts.append(f'<text class="row-label" x="{LABEL_WIDTH - 8}" y="{y + 4:.1f}" text-anchor="end">'
                     f'{escape(_label(s["label"], LABEL_WIDTH - 8))}</text>')
        parts.append(f'<line class="spread" x1="{x(s["mean"] - s["std"]):.1f}" y1="{y:.1f}" '
                     f'x2="{x(s["mean"] + s["std"]):.1f}" y2="{y:.1f}"/>')
        parts.append(f'<line class="mean" x1="{x(s["mean"]):.1f}" y1="{y - 8:.1f}" x2="{x(s["mean"]):.1f}" y2="{y + 8:.1f}"/>')
        parts.extend(f'<circle class="dot" cx="{x(v):.1f}" cy="{y:.1f}" r="4"/>' for v in s["values"])
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)


def dumbbell(rows: list[dict], *, name_a: str, name_b: str, axis_label: str, title: str) -> str:
    """One row per model: its value on A and on B joined by a line, so the gap's size and sign show at a glance.

    ``rows``: [{"label": str, "a": float, "b": float}].
    """
    if not rows:
        return ""
    low, high = _scale([r[k] for r in rows for k in ("a", "b")])
    legend = (
        f'<circle class="dot-a" cx="{LABEL_WIDTH + 6}" cy="14" r="5"/>'
        f'<text class="legend" x="{LABEL_WIDTH + 16}" y="18">{escape(name_a)}</text>'
        f'<circle class="dot-b" cx="{LABEL_WIDTH + 246}" cy="14" r="5"/>'
        f'<text class="legend" x="{LABEL_WIDTH + 256}" y="18">{escape(name_b)}</text>'
    )
    parts, x = _frame(len(rows), low, high, axis_label, title, legend)
    for i, r in enumerate(rows):
        y = TOP + i * ROW + ROW / 2
        parts.append(f'<g class="series"><title>{escape(r["label"])}: {escape(name_a)} {r["a"]:.4f}, '
                     f'{escape(name_b)} {r["b"]:.4f}, gap {r["b"] - r["a"]:+.4f}</title>')
        parts.append(f'<text class="row-label" x="{LABEL_WIDTH - 8}" y="{y + 4:.1f}" text-anchor="end">'
                     f'{escape(_label(r["label"], LABEL_WIDTH - 8))}</text>')
        parts.append(f'<line class="spread" x1="{x(r["a"]):.1f}" y1="{y:.1f}" x2="{x(r["b"]):.1f}" y2="{y:.1f}"/>')
        parts.append(f'<circle class="dot-a" cx="{x(r["a"]):.1f}" cy="{y:.1f}" r="5"/>')
        parts.append(f'<circle class="dot-b" cx="{x(r["b"]):.1f}" cy="{y:.1f}" r="5"/>')
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)


def forest(rows: list[dict], published: list[dict], *, constant: float | None, axis_label: str, title: str) -> str:
    """A forest plot of Δ to the best: one row per model, its Δ as a dot and its 95 % interval as a line (the best
    model's row is the zero line's dot, with no interval); the best constant answer as a dashed vertical line and
    each published number as a diamond on a row of its own below ours, so where a model stands against chance,
    against the others and against the papers reads at a glance.

    ``rows``: [{"label", "delta", "low", "high", "tip"}] best first (``low``/``high`` None: no interval);
    ``published``: [{"label", "delta", "tip"}]; ``constant``: the best constant answer's Δ, or None.
    """
    if not rows:
        return ""
    values = [r[k] for r in rows for k in ("delta", "low", "high") if r[k] is not None]
    values += [p["delta"] for p in published] + ([constant] if constant is not None else []) + [0.0]
    low, high = min(values), max(values)
    pad = max((high - low) * 0.05, 0.01)
    low, high = low - pad, high + pad
    legend = (f'<circle class="dot" cx="{LABEL_WIDTH + 6}" cy="14" r="4"/>'
              f'<text class="legend" x="{LABEL_WIDTH + 16}" y="18">ours, 95 % interval</text>'
              f'<path class="published" d="M {LABEL_WIDTH + 166} 9 l 5 5 l -5 5 l -5 -5 z"/>'
              f'<text class="legend" x="{LABEL_WIDTH + 178}" y="18">published</text>'
              + (f'<line class="constant" x1="{LABEL_WIDTH + 262}" y1="8" x2="{LABEL_WIDTH + 262}" y2="20"/>'
                 f'<text class="legend" x="{LABEL_WIDTH + 270}" y="18">best constant answer</text>'
                 if constant is not None else ""))
    parts, x = _frame(len(rows) + len(published), low, high, axis_label, title, legend)
    bottom = TOP + (len(rows) + len(published)) * ROW
    parts.append(f'<line class="mean" x1="{x(0.0):.1f}" y1="{TOP - 6}" x2="{x(0.0):.1f}" y2="{bottom}"/>')
    if constant is not None:
        parts.append(f'<line class="constant" x1="{x(constant):.1f}" y1="{TOP - 6}" x2="{x(constant):.1f}" '
                     f'y2="{bottom}"><title>best constant answer: Δ {constant:+.4f}</title></line>')
    for row, r in enumerate(rows):
        y = TOP + row * ROW + ROW / 2
        parts.append(f'<g class="series"><title>{escape(r["tip"])}</title>')
        parts.append(f'<text class="row-label" x="{LABEL_WIDTH - 8}" y="{y + 4:.1f}" text-anchor="end">'
                     f'{escape(_label(r["label"], LABEL_WIDTH - 8))}</text>')
        if r["low"] is not None:
            parts.append(f'<line class="spread" x1="{x(r["low"]):.1f}" y1="{y:.1f}" x2="{x(r["high"]):.1f}" y2="{y:.1f}"/>')
        parts.append(f'<circle class="dot" cx="{x(r["delta"]):.1f}" cy="{y:.1f}" r="4"/>')
        parts.append("</g>")
    for row, p in enumerate(published, len(rows)):
        y = TOP + row * ROW + ROW / 2
        parts.append(f'<g class="series published-row"><title>{escape(p["tip"])}</title>')
        parts.append(f'<text class="row-label" x="{LABEL_WIDTH - 8}" y="{y + 4:.1f}" text-anchor="end">'
                     f'{escape(_label(p["label"], LABEL_WIDTH - 8))}</text>')
        parts.append(f'<path class="published" d="M {x(p["delta"]):.1f} {y - 6:.1f} l 6 6 l -6 6 l -6 -6 z"/>')
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)


#: The most task columns in one block of the heat-map: 222 px of labels (30 characters) + 50 × 18 px squares fit
#: the page.
HEATMAP_COLUMNS = 50


def heatmap(models: list[str], families: list[tuple[str, list[tuple[str, dict]]]], *, title: str) -> str:
    """Models × tasks as compact grids, one block per task family (stacked, so squares stay legible however
    many tasks there are), each block listing only the models with a run in it. A square's opacity is the
    model's place between the task's worst and best value (``heat`` 0..1); an outlined square is a run with
    nothing to set it against (``heat`` None: a partial run, or the only model on the task).

    ``families``: [(family title, [(task name, {model: (heat or None, tooltip)})])].
    """
    if not models or not families:
        return ""
    cell, title_row, gap = 18, 18, 10
    blocks = []
    for family, tasks in families:
        # a family wider than HEATMAP_COLUMNS is stacked in parts, so the picture is never scaled down (and its
        # labels never shrink) in the 1,137 px a 1,366 px laptop window leaves the page
        parts_of = [tasks[i:i + HEATMAP_COLUMNS] for i in range(0, len(tasks), HEATMAP_COLUMNS)]
        for number, part in enumerate(parts_of, 1):
            shown = [m for m in models if any(m in values for _, values in part)]
            if shown:
                title_text = family if len(parts_of) == 1 else f"{family} ({number} of {len(parts_of)})"
                blocks.append((title_text, part, shown))
    # the label column fits the longest (cut) model name, so no label starts left of the picture's edge
    label = 6 + max(200, math.ceil(max(text_width(_label(m)) for _, _, shown in blocks for m in shown)))
    width = label + max(len(tasks) for _, tasks, _ in blocks) * cell + 8
    height = sum(title_row + len(shown) * cell + gap for _, _, shown in blocks)
    parts = [f'<svg class="heat" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
             f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>']
    y0 = 0
    for family, tasks, shown in blocks:
        parts.append(f'<text class="family" x="{label}" y="{y0 + 13}">{escape(family)}</text>')
        top = y0 + title_row
        for row, model in enumerate(shown):
            parts.append(f'<text x="{label - 6}" y="{top + row * cell + 13}" text-anchor="end">{escape(_label(model))}</text>')
        for column, (_, values) in enumerate(tasks):
            x = label + column * cell
            for row, model in enumerate(shown):
                heat, tip = values.get(model, (None, None))
                y = top + row * cell
                if tip is None:
                    continue
                if heat is None:
                    parts.append(f'<rect class="empty" x="{x + 1.5}" y="{y + 1.5}" width="{cell - 3}" height="{cell - 3}">'
                                 f'<title>{escape(tip)}</title></rect>')
                else:
                    parts.append(f'<rect class="cell" x="{x + 1}" y="{y + 1}" width="{cell - 2}" height="{cell - 2}" '
                                 f'fill-opacity="{0.12 + 0.88 * heat:.2f}"><title>{escape(tip)}</title></rect>')
        y0 = top + len(shown) * cell + gap
    parts.append("</svg>")
    return "\n".join(parts)
