"""`pypto report` writes one self-contained HTML page: IR per pass, .pto per kernel, the
memory map and the swimlane; a real headless browser loads it without console errors."""

import importlib.util
import json
import os
import pathlib
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
