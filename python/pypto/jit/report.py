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


def swimlane_svg(events: list) -> str:
    """Complete ('X') trace events drawn as bars, one lane per (pid, tid)."""
    spans = [e for e in events if e.get("ph") == "X"]
    if not spans:
        return '<p class="empty">the trace has no spans</p>'
    lanes = sorted({(str(e.get("pid", "")), str(e.get("tid", ""))) for e in spans})
    t0 = min(float(e["ts"]) for e in spans)
    t1 = max(float(e["ts"]) + float(e.get("dur", 0)) for e in spans)
    width, lane_h, left = 900, 18, 160
    scale = (width - left) / max(t1 - t0, 1e-9)
    rows = []
    for i, lane in enumerate(lanes):
        y = 10 + i * lane_h
        rows.append(f'<text x="2" y="{y + 12}">{html.escape(" / ".join(lane))}</text>')
    names = sorted({e.get("name", "") for e in spans})
    for e in spans:
        i = lanes.index((str(e.get("pid", "")), str(e.get("tid", ""))))
        x = left + (float(e["ts"]) - t0) * scale
        w = max(1.0, float(e.get("dur", 0)) * scale)
        color = _COLORS[names.index(e.get("name", "")) % len(_COLORS)]
        label = f"{e.get('name', '')}: {e.get('dur', 0)} us at {e['ts']}"
        rows.append(
            f'<rect x="{x:.1f}" y="{10 + i * lane_h + 2}" width="{w:.1f}" height="{lane_h - 4}" '
            f'fill="{color}"><title>{html.escape(label)}</title></rect>'
        )
    height = 20 + len(lanes) * lane_h
    return (
        f'<svg width="{width}" height="{height}" role="img" aria-label="swimlane">'
        + "".join(rows)
        + "</svg>"
    )


def build_report(build_dir: str | pathlib.Path) -> str:
    """The report page of `build_dir` as HTML text."""
    d = pathlib.Path(build_dir)
    if not d.is_dir():
        raise FileNotFoundError(
            f"build directory '{d}' does not exist; fix: run the program with "
            "RunConfig(dump_passes=True, save_kernels=True, output_dir=...) first"
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
