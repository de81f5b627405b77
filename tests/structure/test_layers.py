"""The C++ layers include only downward (docs/architecture.md#layers).

Each directory of src/ and include/pypto/ is one layer (one CMake library, CMakeLists.txt's
PYPTO_LAYERS); a file may include `pypto/<layer>/...` only of its own layer or one below.
The CMake layer check (target pypto_layer_check) makes an undefined symbol of a higher layer
a link error; this test catches the include that would lead to one, without building.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Lowest first; the same order as PYPTO_LAYERS in CMakeLists.txt.
LAYERS = ["base", "isa", "ir", "ops", "passes", "codegen", "engines", "runtime", "kernel", "bindings"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"pypto/([A-Za-z_]+)/', re.M)


def layer_of(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT).parts
    if rel[0] == "src":
        return rel[1]
    if rel[:2] == ("include", "pypto"):
        return rel[2]
    if rel[:2] == ("python", "bindings"):
        return "bindings"
    raise AssertionError(f"{path}: not in a layer directory")


def sources():
    for top in (ROOT / "src", ROOT / "include" / "pypto", ROOT / "python" / "bindings"):
        for p in sorted(top.rglob("*")):
            if p.suffix in (".h", ".cpp", ".hpp", ".cc") and p.is_file():
                yield p


def back_edges(files):
    """(file, its layer, included layer) for every include of a higher (or unknown) layer."""
    out = []
    for path, text in files:
        mine = layer_of(path)
        for m in INCLUDE.finditer(text):
            theirs = m.group(1)
            if theirs not in LAYERS or LAYERS.index(theirs) > LAYERS.index(mine):
                out.append((str(path.relative_to(ROOT)), mine, theirs))
    return out


def test_every_directory_is_a_layer():
    dirs = {p.name for p in (ROOT / "src").iterdir() if p.is_dir()}
    dirs |= {p.name for p in (ROOT / "include" / "pypto").iterdir() if p.is_dir()}
    unknown = sorted(dirs - set(LAYERS))
    assert not unknown, (f"src/ or include/pypto/ has directories that are no layer: {unknown}; "
                         "fix: put the files in the layer their includes allow, or add the layer to "
                         "LAYERS here and PYPTO_LAYERS in CMakeLists.txt")


def test_cmake_layer_order_matches():
    cmake = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"set\(PYPTO_LAYERS ([a-z ]+)\)", cmake)
    assert m, "CMakeLists.txt has no set(PYPTO_LAYERS ...)"
    assert m.group(1).split() + ["bindings"] == LAYERS


def test_no_include_goes_up_a_layer():
    files = [(p, p.read_text(errors="replace")) for p in sources()]
    assert len(files) > 100  # the scan sees the tree
    bad = back_edges(files)
    assert not bad, "includes of a higher layer (fix: move the declaration down, or the file up):\n" + "\n".join(
        f"  {f} ({a}) includes pypto/{b}/" for f, a, b in bad)


def test_the_check_finds_a_back_edge():
    # The scan itself: an isa file that includes an ir header is reported, a down edge is not.
    isa = ROOT / "src" / "isa" / "x.cpp"
    ops = ROOT / "src" / "ops" / "y.cpp"
    text_up = '#include "pypto/base/dtype.h"\n#include "pypto/ir/expr.h"\n'
    assert back_edges([(isa, text_up)]) == [("src/isa/x.cpp", "isa", "ir")]
    assert back_edges([(ops, text_up)]) == []
    assert back_edges([(ops, '#  include "pypto/bindings/x.h"\n')]) == [("src/ops/y.cpp", "ops", "bindings")]
    assert back_edges([(ops, '#include "pypto/nolayer/x.h"\n')]) == [("src/ops/y.cpp", "ops", "nolayer")]
