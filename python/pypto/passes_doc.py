"""Renders docs/passes.md from the pass pipeline's own descriptions (`_core.pipeline_passes()`).
Regenerate after changing src/passes/pipeline.cpp:  PYTHONPATH=python python -m pypto.passes_doc"""

import pathlib
import sys

from pypto import _core

DOC_PATH = pathlib.Path(__file__).resolve().parents[2] / "docs" / "passes.md"


def render() -> str:
    passes = _core.pipeline_passes()
    lines = [
        "# The pass pipeline",
        "",
        "Generated from `src/passes/pipeline.cpp` by `python -m pypto.passes_doc`; do not edit by hand.",
        "The passes run in this order on every compile; `RunConfig(dump_passes=True)` writes",
        "`passes_dump/NN_after_<Pass>.py` after each pass that changed the program, and",
        "`pypto._core.run_pass(program, name)` runs one pass alone.",
        "",
    ]
    for i, (name, doc) in enumerate(passes, 1):
        lines += [f"## {i}. {name}", "", doc, ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    path = pathlib.Path(argv[1]) if argv and len(argv) > 1 else DOC_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
