"""Charts drawn on the server as inline SVG: no JavaScript, no CDN, nothing to vendor.

Each function takes plain numbers from ``queries`` and returns ``Markup`` (safe SVG). Every mark
carries a ``<title>`` (the browser's tooltip) and a ``data-value``, which the tests read.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

import numpy as np
from markupsafe import Markup, escape

__all__ = ["PALETTE", "entity_graph", "hbars", "heatmap", "stacked_columns", "sunburst", "tag_cloud"]

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac")


def _color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _svg(width: float, height: float, body: list[str], label: str) -> Markup:
    return Markup(f'<svg class="chart" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
                  f'height="{height:.0f}" role="img" aria-label="{escape(label)}">' + "".join(body) + "</svg>")


def _empty(label: str) -> Markup:
    return Markup(f'<p class="empty">No data for {escape(label)} in this scope.</p>')


def stacked_columns(labels: Sequence[str], series: dict[str, Sequence[int]], *, label: str,
                    width: int = 960, height: int = 280) -> Markup:
    """One column per label, stacked by series (the timeline: days x context type)."""
    if not labels or not any(any(v) for v in series.values()):
        return _empty(label)
    left, bottom, top = 44, 36, 10
    plot_w, plot_h = width - left - 10, height - bottom - top
    totals = [sum(s[i] for s in series.values()) for i in range(len(labels))]
    peak = max(totals) or 1
    step = plot_w / len(labels)
    body = [f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 10}" y2="{top + plot_h}" class="axis"/>',
            f'<text x="{left - 6}" y="{top + 8}" class="tick" text-anchor="end">{peak}</text>',
            f'<text x="{left - 6}" y="{top + plot_h}" class="tick" text-anchor="end">0</text>']
    for i, day in enumerate(labels):
        y: float = top + plot_h
        for k, (name, values) in enumerate(series.items()):
            v = values[i]
            if not v:
                continue
            h = v / peak * plot_h
            y -= h
            body.append(f'<rect class="mark" x="{left + i * step:.2f}" y="{y:.2f}" width="{max(step - 0.5, 0.6):.2f}" '
                        f'height="{h:.2f}" fill="{_color(k)}" data-value="{v}"><title>{escape(day)} '
                        f'{escape(name)}: {v}</title></rect>')
    body += _ticks(labels, left=left, step=step, y=height - 14, width=width)
    legend = "".join(f'<rect x="{left + 120 * k}" y="{height - 10}" width="10" height="10" fill="{_color(k)}"/>'
                     f'<text x="{left + 14 + 120 * k}" y="{height - 1}" class="tick">{escape(name)}</text>'
                     for k, name in enumerate(series))
    return _svg(width, height + 6, [*body, legend], label)


CHAR_PX = 6.6  # the tick font's average character width (11 px sans-serif), for fitting labels


def _ticks(labels: Sequence[str], *, left: float, step: float, y: float, width: float) -> list[str]:
    """Labels under the columns: as many as fit without overlapping, none cut at either edge."""
    widest = max(len(lab) for lab in labels) * CHAR_PX + 10
    every = max(1, math.ceil(widest / step))
    out = []
    for i in range(0, len(labels), every):
        x, half = left + (i + 0.5) * step, len(labels[i]) * CHAR_PX / 2
        anchor = "middle"
        if x - half < 2:
            x, anchor = 2.0, "start"
        elif x + half > width - 2:
            x, anchor = width - 2.0, "end"
        out.append(f'<text x="{x:.1f}" y="{y}" class="tick" text-anchor="{anchor}">{escape(labels[i])}</text>')
    return out


def heatmap(grid: Sequence[Sequence[int]], rows: Sequence[str], *, label: str, cell: int = 30) -> Markup:
    """Rows x 24 hours, darker = more."""
    peak = max((v for row in grid for v in row), default=0)
    if not peak:
        return _empty(label)
    left, top = 44, 22
    body = [f'<text x="{left + h * cell + cell / 2}" y="{top - 6}" class="tick" text-anchor="middle">{h}</text>'
            for h in range(24)]
    for r, name in enumerate(rows):
        body.append(f'<text x="{left - 6}" y="{top + r * cell + cell / 2 + 4}" class="tick" text-anchor="end">'
                    f'{escape(name)}</text>')
        for h, v in enumerate(grid[r]):
            shade = 0.06 + 0.94 * (v / peak) ** 0.7 if v else 0.0
            body.append(f'<rect class="mark" x="{left + h * cell}" y="{top + r * cell}" width="{cell - 2}" '
                        f'height="{cell - 2}" fill="#4e79a7" fill-opacity="{shade:.3f}" stroke="#ddd" '
                        f'data-value="{v}"><title>{escape(name)} {h:02d}:00 UTC: {v}</title></rect>')
    return _svg(left + 24 * cell + 4, top + len(rows) * cell + 4, body, label)


def _arc(cx: float, cy: float, r0: float, r1: float, a0: float, a1: float) -> str:
    a1 = min(a1, a0 + 2 * math.pi - 1e-4)
    large = 1 if a1 - a0 > math.pi else 0
    p = [(cx + r * math.sin(a), cy - r * math.cos(a)) for r, a in ((r1, a0), (r1, a1), (r0, a1), (r0, a0))]
    return (f"M{p[0][0]:.2f},{p[0][1]:.2f} A{r1},{r1} 0 {large} 1 {p[1][0]:.2f},{p[1][1]:.2f} "
            f"L{p[2][0]:.2f},{p[2][1]:.2f} A{r0},{r0} 0 {large} 0 {p[3][0]:.2f},{p[3][1]:.2f} Z")


def _hsl(hue: float, light: float) -> str:
    return f"hsl({hue:.0f}, 55%, {light:.0f}%)"


def sunburst(tree: dict[str, Any], *, label: str, size: int = 560) -> Markup:
    """Rings from the centre out: the tree's levels (type -> category -> tag).

    Types take the palette; every category its own hue, spread evenly round the wheel; its tags
    lighter tints of that hue, alternating so neighbours differ. Every ring is labelled where its
    arc has room: the outer ring's labels run along the radius.
    """
    if not tree.get("value"):
        return _empty(label)
    cx = cy = size / 2
    ring = (size / 2 - 8) / 4
    body: list[str] = [f'<circle cx="{cx}" cy="{cy}" r="{ring}" fill="#f4f4f4"/>',
                       f'<text x="{cx}" y="{cy + 5}" class="tick" text-anchor="middle">{tree["value"]}</text>']
    categories = [c for t in tree["children"] for c in t["children"]]
    hues = {id(c): 360 * k / max(len(categories), 1) for k, c in enumerate(categories)}

    def fill(node: dict[str, Any], depth: int, index: int, hue: float) -> str:
        if depth == 1:
            return _color(index)
        return _hsl(hue, 52) if depth == 2 else _hsl(hue, (74, 84)[index % 2])

    def text(node: dict[str, Any], depth: int, a: float, span: float) -> None:
        mid, r = a + span / 2, ring * (depth + 0.5)
        x, y = cx + r * math.sin(mid), cy - r * math.cos(mid)
        name = str(node["name"])
        if depth < 3:
            if span * r < 34:
                return
            fit = max(3, int(span * r / 6.5))
            shown = name if len(name) <= fit else name[:fit - 1] + "…"
            body.append(f'<text x="{x:.1f}" y="{y + 4:.1f}" class="arc-label" text-anchor="middle">{escape(shown)}</text>')
            return
        if span * r < 10:  # thinner than a line of text
            return
        fit = int((ring - 8) / 6)
        shown = name if len(name) <= fit else name[:fit - 1] + "…"
        angle = math.degrees(mid) - 90
        if angle > 90:  # the left half reads upside down otherwise
            angle -= 180
        body.append(f'<text x="{x:.1f}" y="{y:.1f}" class="arc-label outer" text-anchor="middle" dominant-baseline="middle" '
                    f'transform="rotate({angle:.1f} {x:.1f} {y:.1f})">{escape(shown)}</text>')

    def draw(node: dict[str, Any], depth: int, a0: float, a1: float, hue: float, path: str) -> None:
        total = node["value"] or 1
        a = a0
        for i, child in enumerate(node["children"]):
            span = (a1 - a0) * child["value"] / total
            own = hues.get(id(child), hue)
            name = f"{path} / {child['name']}" if path else child["name"]
            body.append(f'<path class="mark ring{depth}" d="{_arc(cx, cy, ring * depth, ring * (depth + 1) - 1, a, a + span)}" '
                        f'fill="{fill(child, depth, i, own)}" stroke="#fff" data-value="{child["value"]}">'
                        f'<title>{escape(name)}: {child["value"]}</title></path>')
            text(child, depth, a, span)
            if child["children"]:
                draw(child, depth + 1, a, a + span, own, name)
            a += span

    draw(tree, 1, 0.0, 2 * math.pi, 0.0, "")
    return _svg(size, size, body, label)


def hbars(rows: Sequence[dict[str, Any]], keys: Sequence[str], *, label: str, width: int = 760) -> Markup:
    """Horizontal bars stacked by ``keys`` (the freshness histogram: current vs superseded)."""
    peak = max((sum(r[k] for k in keys) for r in rows), default=0)
    if not peak:
        return _empty(label)
    left, bar, gap = 110, 26, 8
    plot_w = width - left - 80
    body = []
    for i, r in enumerate(rows):
        y, x = i * (bar + gap) + 4, float(left)
        body.append(f'<text x="{left - 8}" y="{y + bar / 2 + 4}" class="tick" text-anchor="end">{escape(r["label"])}</text>')
        for k, key in enumerate(keys):
            w = r[key] / peak * plot_w
            if r[key]:
                body.append(f'<rect class="mark" x="{x:.2f}" y="{y}" width="{max(w, 1):.2f}" height="{bar}" '
                            f'fill="{_color(k if k == 0 else 3)}" data-value="{r[key]}"><title>{escape(r["label"])} '
                            f'{escape(key)}: {r[key]}</title></rect>')
            x += w
        body.append(f'<text x="{x + 6:.1f}" y="{y + bar / 2 + 4}" class="tick">{sum(r[k] for k in keys)}</text>')
    y = len(rows) * (bar + gap) + 12
    body += [f'<rect x="{left + 150 * k}" y="{y}" width="10" height="10" fill="{_color(k if k == 0 else 3)}"/>'
             f'<text x="{left + 14 + 150 * k}" y="{y + 9}" class="tick">{escape(key)}</text>' for k, key in enumerate(keys)]
    return _svg(width, y + 16, body, label)


def tag_cloud(counts: Sequence[tuple[str, int]], *, href: str, label: str) -> Markup:
    """Tags as links sized by the log of their count, in alphabetical order."""
    if not counts:
        return _empty(label)
    lo, hi = math.log(min(n for _, n in counts)), math.log(max(n for _, n in counts))
    words = []
    for tag, n in sorted(counts):
        size = 0.8 + 2.0 * ((math.log(n) - lo) / (hi - lo) if hi > lo else 0.5)
        cls = "tag"
        words.append(f'<a class="{cls}" style="font-size:{size:.2f}em" href="{escape(href)}{escape(quote(tag, safe=""))}" '
                     f'data-value="{n}" title="{n} entries">{escape(tag)}</a>')
    return Markup(f'<div class="cloud" aria-label="{escape(label)}">' + " ".join(words) + "</div>")


def _layout(n: int, edges: list[tuple[int, int, int]], *, seed: int = 1, rounds: int = 200) -> np.ndarray:
    """Fruchterman-Reingold with a pull to the centre (keeps separate clusters in view);
    deterministic for a given graph. Returns positions scaled into [0, 1]."""
    if n == 1:
        return np.full((1, 2), 0.5)
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-1, 1, (n, 2))
    k = 1.0 / math.sqrt(n)
    temp = 0.2
    a_idx = np.array([a for a, _, _ in edges], dtype=int)
    b_idx = np.array([b for _, b, _ in edges], dtype=int)
    for _ in range(rounds):
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.linalg.norm(delta, axis=2) + 1e-6
        force = (delta * (k * k / dist**2)[..., None]).sum(axis=1)
        if edges:
            d = pos[a_idx] - pos[b_idx]
            pull = d * (np.linalg.norm(d, axis=1) / k)[:, None]
            np.add.at(force, a_idx, -pull)
            np.add.at(force, b_idx, pull)
        force -= pos * (np.linalg.norm(pos, axis=1, keepdims=True) / k) * 0.5
        length = np.linalg.norm(force, axis=1) + 1e-9
        pos += force / length[:, None] * np.minimum(length, temp)[:, None]
        temp = max(temp * 0.975, 0.002)
    span = np.ptp(pos, axis=0)
    span[span == 0] = 1
    scaled: np.ndarray = (pos - pos.min(axis=0)) / span
    return scaled


def entity_graph(graph: dict[str, Any], *, href: str, label: str, width: int = 900, height: int = 600) -> Markup:
    """Entities as circles sized by their entry count, co-occurrence links weighted by how often."""
    nodes = graph.get("nodes", [])
    if not nodes:
        return _empty(label)
    index = {n["id"]: i for i, n in enumerate(nodes)}
    weights: dict[tuple[int, int], int] = {}
    for e in graph.get("edges", []):
        if e["a"] in index and e["b"] in index and e["a"] != e["b"]:
            i, j = index[e["a"]], index[e["b"]]
            key = (min(i, j), max(i, j))
            weights[key] = weights.get(key, 0) + 1
    edges = [(a, b, w) for (a, b), w in weights.items()]
    pos = _layout(len(nodes), edges)
    pad = 50
    xy = [(pad + x * (width - 2 * pad), pad + y * (height - 2 * pad)) for x, y in pos]
    peak_w = max((w for *_, w in edges), default=1)
    peak_n = max(n["entries"] for n in nodes) or 1
    body = [f'<line class="link" x1="{xy[a][0]:.1f}" y1="{xy[a][1]:.1f}" x2="{xy[b][0]:.1f}" y2="{xy[b][1]:.1f}" '
            f'stroke-width="{0.6 + 3 * w / peak_w:.2f}" data-value="{w}"><title>{escape(nodes[a]["text"])} - '
            f'{escape(nodes[b]["text"])}: {w}</title></line>' for a, b, w in edges]
    # a type only where the mentions agree (queries.tidy_graph); the rest grey, "type unsure"
    types = sorted({n["type"] for n in nodes if n.get("type")})
    unsure = "#a0a6ad"

    def colour(n: dict[str, Any]) -> str:
        return _color(types.index(n["type"])) if n.get("type") else unsure

    for i, n in enumerate(nodes):
        r = 5 + 14 * math.sqrt(n["entries"] / peak_n)
        kind = n.get("type") or "type unsure"
        body.append(f'<a href="{escape(href)}{escape(quote(n["norm"], safe=""))}"><circle class="mark" cx="{xy[i][0]:.1f}" '
                    f'cy="{xy[i][1]:.1f}" r="{r:.1f}" fill="{colour(n)}" '
                    f'data-value="{n["entries"]}"><title>{escape(n["text"])} ({escape(kind)}): '
                    f'{n["entries"]} entries</title></circle><text x="{xy[i][0]:.1f}" y="{xy[i][1] - r - 3:.1f}" '
                    f'class="node-label" text-anchor="middle">{escape(n["text"][:24])}</text></a>')
    keys = [*((t, _color(k)) for k, t in enumerate(types)), *((("type unsure", unsure),) if any(
        not n.get("type") for n in nodes) else ())]
    legend = [f'<rect x="{10 + 110 * k}" y="{height - 14}" width="10" height="10" fill="{c}"/>'
              f'<text x="{24 + 110 * k}" y="{height - 5}" class="tick">{escape(lab)}</text>'
              for k, (lab, c) in enumerate(keys)]
    return _svg(width, height, [*body, *legend], label)
