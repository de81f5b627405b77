"""C++ namespaces follow the layers (docs/architecture.md#layers).

A file of layer L declares its names in `pypto::L` (or a namespace nested in it); the base layer
is `pypto` itself (and `pypto::scalar`), the optimised tile library that native kernels compile
(include/pypto/isa/optimized/) is `pto_opt`. A block in another layer's namespace may only
forward-declare a class (`namespace pypto::engines { class SimEngine; }`), so a reader finds a
name in the directory its namespace names.
"""

import pathlib
import re

from test_layers import ROOT, layer_of, sources

OPEN = re.compile(r"^\s*namespace\s+([A-Za-z_][\w:]*)\s*\{", re.M)
FORWARD = re.compile(r"^\s*(class|struct)\s+\w+\s*;\s*(//.*)?$")


def allowed(path: pathlib.Path, layer: str, ns: str) -> bool:
    if "isa/optimized" in path.as_posix():
        return ns == "pto_opt"
    if layer == "base":
        return ns in ("pypto", "pypto::scalar")
    return ns == f"pypto::{layer}" or ns.startswith(f"pypto::{layer}::")


def block_body(text: str, start: int) -> str:
    depth, i = 0, text.index("{", start)
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1:j]
    return text[i + 1:]


def foreign_namespaces(files):
    """(file, its layer, namespace) for every block in a namespace of another layer that does more
    than forward-declare classes."""
    out = []
    for path, text in files:
        layer = layer_of(path)
        for m in OPEN.finditer(text):
            ns = m.group(1)
            if allowed(path, layer, ns):
                continue
            body = [ln for ln in block_body(text, m.start()).splitlines() if ln.strip()]
            if body and all(FORWARD.match(ln) for ln in body):
                continue
            out.append((str(path.relative_to(ROOT)), layer, ns))
    return out


def test_every_layer_declares_in_its_own_namespace():
    files = [(p, p.read_text(errors="replace")) for p in sources()]
    bad = foreign_namespaces(files)
    assert not bad, ("declarations outside their layer's namespace (fix: use namespace pypto::<layer>, "
                     "or move the declaration to the layer it names):\n"
                     + "\n".join(f"  {f} ({a}) declares in {ns}" for f, a, ns in bad))


def test_the_check_finds_a_foreign_namespace():
    ops = ROOT / "src" / "ops" / "x.cpp"
    assert foreign_namespaces([(ops, "namespace pypto::ops {\nint f();\n}\n")]) == []
    assert foreign_namespaces([(ops, "namespace pypto::codegen {\nint f();\n}\n")]) == [
        ("src/ops/x.cpp", "ops", "pypto::codegen")]
    assert foreign_namespaces([(ops, "namespace pypto::isa {\nclass Kernel;  // fwd\n}\n")]) == []
    base = ROOT / "include" / "pypto" / "base" / "y.h"
    assert foreign_namespaces([(base, "namespace pypto::ir {\nusing X = int;\n}\n")]) == [
        ("include/pypto/base/y.h", "base", "pypto::ir")]
