"""`pypto report` writes one self-contained HTML page: IR per pass, .pto per kernel, the
memory map and the swimlane; a real headless browser loads it without console errors."""

import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess

import numpy as np
import pytest
from pypto.runtime import RunConfig
from pypto.tools.cli import main

SOFTMAX = (
    pathlib.Path(__file__).resolve().parents[2] / "examples" / "intermediate" / "02_softmax.py"
)


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("softmax_example", SOFTMAX)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path_factory.mktemp("build")
    x = np.random.default_rng(0).standard_normal((256, 128), dtype=np.float32)
    y = np.zeros_like(x)
    module.softmax(x, y, config=RunConfig(dump_passes=True, save_kernels=True, output_dir=str(out)))
    (out / "swimlane.json").write_text(
        json.dumps(
            {
                "traceEvents": [
                    {"ph": "X", "pid": "AIV0", "tid": "V", "name": "TEXP", "ts": 0.0, "dur": 2.5},
                    {
                        "ph": "X",
                        "pid": "AIV0",
                        "tid": "MTE2",
                        "name": "TLOAD",
                        "ts": 1.0,
                        "dur": 4.0,
                    },
                ]
            }
        )
    )
    return out


def test_report_has_every_section(build_dir, capsys):
    assert main(["report", str(build_dir)]) == 0
    page = (build_dir / "report.html").read_text()
    for anchor in ('id="passes"', 'id="kernels"', 'id="memory"', 'id="swimlane"'):
        assert anchor in page
    assert "01_after_OutlineIncore.py" in page and "pto.trowmax" in page.lower()
    assert 'aria-label="memory map of Vec"' in page and 'aria-label="swimlane"' in page
    assert "http://" not in page and "https://" not in page  # self-contained


def test_report_memory_map_places_every_tile(build_dir):
    kernels = json.loads((build_dir / "memory_map.json").read_text())
    tiles = kernels[0]["tiles"]
    assert {t["memory"] for t in tiles} == {"Vec"}
    assert all(t["addr"] % 32 == 0 and t["addr"] + t["bytes"] <= 192 * 1024 for t in tiles)


def test_missing_build_dir_is_a_clear_error(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope")]) == 1
    assert "fix: run the program with RunConfig(dump_passes=True" in capsys.readouterr().err


def _chromium():
    return (
        shutil.which("chromium")
        or shutil.which("chromium-browser")
        or shutil.which("google-chrome")
    )


def test_report_loads_in_a_headless_browser(build_dir):
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install chromium (apt-get install chromium) for this test")
        pytest.skip("chromium is not installed")
    main(["report", str(build_dir)])
    page = (build_dir / "report.html").resolve()
    cmd = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=3000",
        "--dump-dom",
        page.as_uri(),
    ]
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    console = [line for line in r.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert console == []
    for anchor in ('id="passes"', 'id="kernels"', 'id="memory"', 'id="swimlane"'):
        assert anchor in r.stdout


TRACE = [
    {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "a2a3sim (host wall clock)"}},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 24, "args": {"name": "AIV 0"}},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 0, "args": {"name": "AIC 0"}},
    {"ph": "M", "name": "thread_sort_index", "pid": 0, "tid": 24, "args": {"sort_index": 24}},
    {"ph": "X", "name": "mm", "pid": 0, "tid": 0, "ts": 100.0, "dur": 40.0, "args": {"task": 0, "deps": []}},
    {"ph": "X", "name": "act", "pid": 0, "tid": 24, "ts": 150.0, "dur": 10.0, "args": {"task": 1, "deps": [0]}},
    {"ph": "s", "name": "dep", "cat": "dep", "id": 1, "pid": 0, "tid": 0, "ts": 140.0},
    {"ph": "f", "bp": "e", "name": "dep", "cat": "dep", "id": 1, "pid": 0, "tid": 24, "ts": 150.0},
]


def test_swimlane_names_lanes_and_tasks_draws_axis_arrows_and_legend():
    from pypto.tools.report import swimlane_svg

    page = swimlane_svg(TRACE)
    assert ">AIC 0</text>" in page and ">AIV 0</text>" in page  # the trace's thread names, not "0 / 24"
    assert "0 / 24" not in page
    assert page.index(">AIC 0<") < page.index(">AIV 0<")  # sort order: tid 0 before the sort index 24
    assert "time (us from the first task)" in page
    ticks = [float(t) for t in re.findall(r'class="tick"[^>]*>([\d.]+)</text>', page)]
    assert ticks[0] == 0 and ticks[-1] <= 60 and ticks == sorted(ticks) and len(ticks) >= 4
    titles = re.findall(r"<title>([^<]*)</title>", page)
    assert any(t.startswith("mm\n40 us, from 0 to 40 us\nlane: AIC 0") for t in titles), titles
    assert any(t.startswith("act\n10 us, from 50 to 60 us\nlane: AIV 0") and "deps: [0]" in t for t in titles)
    assert page.count('class="dep"') == 1 and 'marker-end="url(#dep-arrow)"' in page
    assert 'aria-label="swimlane legend"' in page and ">mm</li>" in page and ">act</li>" in page
    assert "Perfetto" in page and "ui.perfetto.dev" in page


def test_report_of_an_empty_directory_fails_with_a_fix(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "holds nothing to report" in err and "fix: run the program with RunConfig(" in err
    assert not (tmp_path / "report.html").exists()
