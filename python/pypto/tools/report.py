"""`pypto report BUILD_DIR`: the HTML report of a build directory (pypto.jit.report builds it)."""

from pypto.jit.report import build_report, main, memory_map_svg, swimlane_svg  # noqa: F401
