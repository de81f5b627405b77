"""Draws a Chrome-trace JSON written by RunConfig(trace_path=...) as an SVG swimlane
picture: one lane per (core, pipe), one box per instruction. No plotting library needed.

Usage: python tools/trace_svg.py trace.json out.svg [title]
"""

import json
import sys

COLORS = {"MTE2": "#4c78a8", "V": "#f58518", "MTE3": "#54a24b", "M": "#e45756", "MTE1": "#72b7b2",
          "FIX": "#b279a2", "S": "#9d755d"}
PIPES = ["MTE2", "MTE1", "M", "FIX", "V", "MTE3", "S"]


def draw(trace, title):
    pipe_names = {}
    for e in trace["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "thread_name":
            pipe_names[(e["pid"], e["tid"])] = e["args"]["name"]
    boxes = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    lanes = sorted({(e["pid"], pipe_names[(e["pid"], e["tid"])]) for e in boxes},
                   key=lambda l: (l[0], PIPES.index(l[1])))
    end = max(e["args"]["end_cycle"] for e in boxes)
    width, left, lane_h, top = 1100, 110, 26, 40
    scale = (width - left - 20) / end
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + lane_h * len(lanes) + 40}" '
           'font-family="sans-serif" font-size="11">',
           f'<text x="10" y="20" font-size="14">{title} ({end:.0f} modelled cycles)</text>']
    for i, (core, pipe) in enumerate(lanes):
        y = top + i * lane_h
        out.append(f'<text x="10" y="{y + 16}">core {core} {pipe}</text>')
        out.append(f'<line x1="{left}" y1="{y + lane_h - 2}" x2="{width - 20}" y2="{y + lane_h - 2}" stroke="#ddd"/>')
        for e in boxes:
            if e["pid"] != core or pipe_names[(e["pid"], e["tid"])] != pipe:
                continue
            x = left + e["args"]["start_cycle"] * scale
            w = max(1.0, (e["args"]["end_cycle"] - e["args"]["start_cycle"]) * scale)
            out.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{lane_h - 8}" '
                       f'fill="{COLORS.get(pipe, "#888")}" stroke="white" stroke-width="0.5">'
                       f'<title>{e["name"]} {e["args"]["start_cycle"]:.0f}-{e["args"]["end_cycle"]:.0f}</title></rect>')
    y = top + lane_h * len(lanes) + 20
    for k in range(0, 6):
        c = end * k / 5
        out.append(f'<text x="{left + c * scale:.0f}" y="{y}">{c:.0f}</text>')
    out.append("</svg>")
    return "\n".join(out)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        trace = json.load(f)
    with open(sys.argv[2], "w") as f:
        f.write(draw(trace, sys.argv[3] if len(sys.argv) > 3 else sys.argv[1]))
