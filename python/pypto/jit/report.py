"""`pypto report BUILD_DIR`: one self-contained HTML page about a compiled program.

It shows the IR after each pass (passes_dump/), the `.pto` of each kernel (kernels/), a
memory map per kernel (memory_map.json: which tile occupies which bytes of which buffer
over the kernel's instructions) and the swimlane (swimlane.json, Chrome-trace events) when
the build directory has them. The page needs no network and no scripts from elsewhere.
"""

from __future__ import annotations

import html
import json
import pathlib

_COLORS = [
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
]

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; }
pre { background: #f6f8fa; padding: 1em; overflow-x: auto; font-size: 12px; }
details { margin: .5em 0; } summary { cursor: pointer; font-weight: 600; }
svg text { font-size: 11px; font-family: sans-serif; }
.empty { color: #888; font-style: italic; }
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .4em 1.2em; font-size: 12px; }
.swatch { display: inline-block; width: 12px; height: 12px; margin-right: .3em; vertical-align: middle; }
svg text.bar { fill: #fff; font-size: 10px; } svg text.tick { fill: #555; font-size: 10px; }
.note { font-size: 12px; color: #555; }
"""


def _section(title: str, anchor: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{html.escape(title)}</h2>\n{body}\n</section>\n'


def _files_section(directory: pathlib.Path, pattern: str, empty: str) -> str:
    files = sorted(directory.glob(pattern)) if directory.is_dir() else []
    if not files:
        return f'<p class="empty">{html.escape(empty)}</p>'
    parts = []
    for i, f in enumerate(files):
        opened = " open" if i == len(files) - 1 else ""
        parts.append(
            f"<details{opened}><summary>{html.escape(f.name)}</summary>"
            f"<pre>{html.escape(f.read_text())}</pre></details>"
        )
    return "\n".join(parts)


def memory_map_svg(kernel: dict) -> str:
    """Per buffer: x = instruction index, y = byte address; one rectangle per tile."""
    out = []
    n_instr = max(1, kernel.get("instructions", 1))
    by_memory: dict[str, list] = {}
    for t in kernel["tiles"]:
        by_memory.setdefault(t["memory"], []).append(t)
    for memory, tiles in sorted(by_memory.items()):
        top = max(t["addr"] + t["bytes"] for t in tiles)
        width, height, left = 640, 160, 70
        rects = []
        for i, t in enumerate(tiles):
            x0 = left + (width - left) * t["first"] / n_instr
            x1 = left + (width - left) * (t["last"] + 1) / n_instr
            y0 = height - 20 - (height - 30) * (t["addr"] + t["bytes"]) / top
            h = max(2.0, (height - 30) * t["bytes"] / top)
            color = _COLORS[i % len(_COLORS)]
            label = f"{t['name']}: {t['bytes']} B at {t['addr']}, instructions {t['first']}..{t['last']}"
            rects.append(
                f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{max(2.0, x1 - x0):.1f}" height="{h:.1f}" '
                f'fill="{color}" fill-opacity="0.75" stroke="#333"><title>{html.escape(label)}</title></rect>'
            )
            if x1 - x0 > 40 and h > 12:
                rects.append(
                    f'<text x="{x0 + 3:.1f}" y="{y0 + 12:.1f}" fill="#fff">{html.escape(t["name"])}</text>'
                )
        out.append(
            f"<figure><figcaption>{html.escape(kernel['name'])} / {html.escape(memory)}: "
            f"{top} bytes used</figcaption>"
            f'<svg width="{width}" height="{height}" role="img" aria-label="memory map of {html.escape(memory)}">'
            f'<line x1="{left}" y1="{height - 20}" x2="{width}" y2="{height - 20}" stroke="#333"/>'
            f'<line x1="{left}" y1="10" x2="{left}" y2="{height - 20}" stroke="#333"/>'
            f'<text x="{left}" y="{height - 5}">instruction 0</text>'
            f'<text x="{width - 90}" y="{height - 5}">instruction {n_instr}</text>'
            f'<text x="2" y="20">{top} B</text><text x="2" y="{height - 22}">0</text>'
            + "".join(rects)
            + "</svg></figure>"
        )
    return "\n".join(out)


def _nice_step(span: float, ticks: int = 8) -> float:
    """A 1/2/5 x 10^k step giving about `ticks` ticks over `span`."""
    import math

    raw = max(span, 1e-9) / ticks
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)


def _fmt(v: float) -> str:
    return f"{v:.3f}".rstrip("0").rstrip(".") or "0"


def swimlane_svg(events: list) -> str:
    """A Chrome trace (swimlane.json) drawn as a swimlane: one lane per (pid, tid) named by
    the trace's process_name / thread_name metadata, a time axis in microseconds from the
    first span, one bar per complete ('X') event with its name on it and its name, duration,
    start and arguments on hover, the flow ('s' -> 'f') events as dependency arrows, and a
    legend of the colours (one per span name)."""
    spans = [e for e in events if e.get("ph") == "X"]
    if not spans:
        return '<p class="empty">the trace has no spans</p>'
    procs, threads, order = {}, {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        key = (str(e.get("pid", "")), str(e.get("tid", "")))
        value = (e.get("args") or {})
        if e.get("name") == "process_name":
            procs[key[0]] = str(value.get("name", key[0]))
        elif e.get("name") == "thread_name":
            threads[key] = str(value.get("name", key[1]))
        elif e.get("name") == "thread_sort_index":
            order[key] = value.get("sort_index", 0)

    def lane_of(e):
        return (str(e.get("pid", "")), str(e.get("tid", "")))

    lanes = sorted({lane_of(e) for e in spans}, key=lambda k: (k[0], order.get(k, 0), k[1]))
    several_procs = len({k[0] for k in lanes}) > 1

    def lane_name(k):
        name = threads.get(k) or (f"thread {k[1]}" if k[1] else "")
        proc = procs.get(k[0], f"process {k[0]}")
        return f"{proc}: {name}" if several_procs or not name else name

    t0 = min(float(e["ts"]) for e in spans)
    t1 = max(float(e["ts"]) + float(e.get("dur", 0)) for e in spans)
    names = sorted({str(e.get("name", "")) for e in spans})
    width, lane_h, left, top = 1000, 22, 170, 24
    plot_w = width - left - 10
    scale = plot_w / max(t1 - t0, 1e-9)
    axis_y = top + len(lanes) * lane_h

    def x_of(ts: float) -> float:
        return left + (ts - t0) * scale

    def y_mid(k) -> float:
        return top + lanes.index(k) * lane_h + lane_h / 2

    rows = [
        ('<defs><marker id="dep-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" markerHeight="6" '
         'orient="auto-start-reverse"><path d="M0,0 L8,4 L0,8 z" fill="#333"/></marker></defs>')
    ]
    for i, k in enumerate(lanes):
        y = top + i * lane_h
        if i % 2:
            rows.append(f'<rect x="{left}" y="{y}" width="{plot_w}" height="{lane_h}" fill="#f4f4f4"/>')
        rows.append(f'<text class="lane" x="4" y="{y + lane_h / 2 + 4:.1f}">{html.escape(lane_name(k))}</text>')
    # The time axis: ticks every 1/2/5 x 10^k microseconds from the first span.
    step = _nice_step(t1 - t0)
    rows.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="#333"/>')
    tick = 0.0
    while tick <= (t1 - t0) + 1e-9:
        x = left + tick * scale
        rows.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{axis_y + 4}" stroke="#ddd"/>')
        rows.append(f'<text class="tick" x="{x:.1f}" y="{axis_y + 16}" text-anchor="middle">{_fmt(tick)}</text>')
        tick += step
    rows.append(f'<text class="axis" x="{left + plot_w / 2:.1f}" y="{axis_y + 32}" text-anchor="middle">'
                "time (us from the first task)</text>")
    for e in spans:
        k = lane_of(e)
        ts, dur = float(e["ts"]), float(e.get("dur", 0))
        x, w = x_of(ts), max(1.0, dur * scale)
        y = top + lanes.index(k) * lane_h + 3
        name = str(e.get("name", ""))
        color = _COLORS[names.index(name) % len(_COLORS)]
        args = e.get("args") or {}
        extra = "".join(f"\n{a}: {v}" for a, v in args.items())
        label = f"{name}\n{_fmt(dur)} us, from {_fmt(ts - t0)} to {_fmt(ts - t0 + dur)} us\nlane: {lane_name(k)}{extra}"
        rows.append(
            f'<g class="task"><rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{lane_h - 6}" fill="{color}">'
            f"<title>{html.escape(label)}</title></rect>"
        )
        if w > 7 * len(name) * 0.75:
            rows.append(f'<text class="bar" x="{x + 3:.1f}" y="{y + lane_h / 2 + 1:.1f}">{html.escape(name)}</text>')
        rows.append("</g>")
    # Dependency arrows: each flow start ('s', at the end of the producer) to its finish ('f').
    starts = {}
    for e in events:
        if e.get("ph") == "s":
            starts[(e.get("cat"), e.get("id"))] = e
    arrows = 0
    for e in events:
        if e.get("ph") != "f":
            continue
        s0 = starts.get((e.get("cat"), e.get("id")))
        if s0 is None or lane_of(s0) not in lanes or lane_of(e) not in lanes:
            continue
        x1, y1, x2, y2 = x_of(float(s0["ts"])), y_mid(lane_of(s0)), x_of(float(e["ts"])), y_mid(lane_of(e))
        if lane_of(s0) == lane_of(e):  # same lane: an arc above the bars
            path = f"M{x1:.1f},{y1 - 4:.1f} Q{(x1 + x2) / 2:.1f},{y1 - lane_h:.1f} {x2:.1f},{y2 - 4:.1f}"
        else:
            path = f"M{x1:.1f},{y1:.1f} L{x2:.1f},{y2:.1f}"
        rows.append(f'<path class="dep" d="{path}" fill="none" stroke="#333" stroke-width="1" '
                    f'marker-end="url(#dep-arrow)"><title>dependency: {_fmt(float(s0["ts"]) - t0)} us -&gt; '
                    f'{_fmt(float(e["ts"]) - t0)} us</title></path>')
        arrows += 1
    height = axis_y + 44
    svg = (f'<svg width="{width}" height="{height}" role="img" aria-label="swimlane">' + "".join(rows) + "</svg>")
    legend = ['<ul class="legend" aria-label="swimlane legend">']
    for name in names:
        legend.append(f'<li><span class="swatch" style="background:{_COLORS[names.index(name) % len(_COLORS)]}">'
                      f"</span>{html.escape(name)}</li>")
    legend.append('<li><svg width="28" height="10"><line x1="0" y1="5" x2="22" y2="5" stroke="#333" '
                  'marker-end="url(#dep-arrow)"/></svg>dependency (the consumer starts after the producer ends)'
                  f" ({arrows})</li></ul>")
    note = ('<p class="note">Hover a bar for its task, duration and arguments. swimlane.json is a Chrome trace: '
            "open it in Perfetto (ui.perfetto.dev, Open trace file) or chrome://tracing to zoom and search.</p>")
    return svg + "".join(legend) + note


def build_report(build_dir: str | pathlib.Path) -> str:
    """The report page of `build_dir` as HTML text."""
    d = pathlib.Path(build_dir)
    if not d.is_dir():
        raise FileNotFoundError(
            f"build directory '{d}' does not exist; fix: run the program with "
            "RunConfig(dump_passes=True, save_kernels=True, output_dir=...) first"
        )
    shown = [p for p in ("passes_dump", "kernels", "memory_map.json", "swimlane.json") if (d / p).exists()]
    if not shown:
        raise FileNotFoundError(
            f"'{d}' holds nothing to report (no passes_dump/, kernels/, memory_map.json or swimlane.json); "
            "fix: run the program with RunConfig(dump_passes=True, save_kernels=True, enable_chip_swimlane=1, "
            f"output_dir='{d}') and run `pypto report {d}` again"
        )
    sections = [
        _section(
            "IR after each pass",
            "passes",
            _files_section(
                d / "passes_dump", "*.py", "no pass dumps (RunConfig(dump_passes=True))"
            ),
        ),
        _section(
            "Kernels (.pto)",
            "kernels",
            _files_section(
                d / "kernels", "*.pto", "no saved kernels (RunConfig(save_kernels=True))"
            ),
        ),
    ]
    mm = d / "memory_map.json"
    if mm.is_file():
        kernels = json.loads(mm.read_text())
        body = "\n".join(memory_map_svg(k) for k in kernels) or '<p class="empty">no tiles</p>'
    else:
        body = '<p class="empty">no memory map (written with dump_passes or save_kernels)</p>'
    sections.append(_section("Memory map", "memory", body))
    sl = d / "swimlane.json"
    if sl.is_file():
        data = json.loads(sl.read_text())
        events = data["traceEvents"] if isinstance(data, dict) else data
        body = swimlane_svg(events)
    else:
        body = '<p class="empty">no swimlane (RunConfig(enable_chip_swimlane=1))</p>'
    sections.append(_section("Swimlane", "swimlane", body))
    title = f"pypto report: {d.resolve().name}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>"
        '<nav><a href="#passes">passes</a> | <a href="#kernels">kernels</a> | '
        '<a href="#memory">memory map</a> | <a href="#swimlane">swimlane</a></nav>'
        + "".join(sections)
        + "</body></html>\n"
    )


def main(build_dir: str, output: str | None = None) -> int:
    out = pathlib.Path(output) if output else pathlib.Path(build_dir) / "report.html"
    out.write_text(build_report(build_dir))
    print(f"wrote {out}")
    return 0
