"""The import structure of python/pypto, read from the code's own imports (the AST of every
module): no import circles, and no import that runs up the layer order.

The layers, lowest first (a module may import its own layer and the layers below it):

    base      pypto._core (the C++ extension), pypto._driver, pypto.backend, pypto.isa
    language  pypto.language   parses Python source into IR (ir.Program); @pl.jit makes a
                               function object that knows how to parse itself, nothing more
    jit       pypto.jit        specialises a @pl.jit function on its arguments, compiles,
                               caches (keyed by the RunConfig), calls the compiled program
    ir        pypto.ir         PyPTO's Python face of the IR: node accessors, builder, visitors,
                               PassManager / PassContext, and pypto.ir.compile (built on jit);
                               pypto.pypto_core (PyPTO's alias names) sits here too
    runtime   pypto.runtime    PyPTO's run API: run / compile_program / execute_compiled /
                               benchmark, ChipWorker, TensorSpec, golden files
    top       pypto (the root package), pypto.lanes, pypto.debug, pypto.tools

The one place a lower layer needs a higher one is a @pl.jit function being called (the
language makes it, the jit package compiles and runs it): the language asks pypto._driver
for the jit package, and the root package (the top, where the layers are put together)
tells pypto._driver how to load it. That is dependency inversion, not an import.

Imports inside functions are collected separately and must respect the same rules: a
function-local import that closes a circle is a circle, and one that runs up a layer is an
upward import (the root package may import anything anywhere: it is the top).
`import a.b.c` also runs the __init__ of `a.b` (every package above the module but the root):
that counts as an import of the package."""

import ast
import os

import pytest

PKG_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "python", "pypto")
ROOT = "pypto"
LAYERS = ["base", "language", "jit", "ir", "runtime", "top"]
LAYER_OF_PACKAGE = {
    "_core": "base", "_driver": "base", "_traceback": "base", "backend": "base", "isa": "base",
    "language": "language",
    "jit": "jit",
    "ir": "ir", "pypto_core": "ir",
    "runtime": "runtime",
    "lanes": "top", "debug": "top", "tools": "top",
}


def module_files():
    """{module name: path} of every module of the package (the extension as pypto._core)."""
    out = {f"{ROOT}._core": None}
    base = os.path.abspath(PKG_DIR)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for fn in filenames:
            if not fn.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, fn), base)[:-3].split(os.sep)
            if rel[-1] == "__init__":
                rel = rel[:-1]
            out[".".join([ROOT, *rel])] = os.path.join(dirpath, fn)
    return out


def _is_package(path):
    return path is not None and os.path.basename(path) == "__init__.py"


def _type_checking_block(node):
    test = node.test
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(tree):
    """(node, inside a function) for every import statement (type-checking blocks skipped)."""
    found = []

    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking_block(child):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child, in_function))
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(tree, False)
    return found


def _targets(module, path, node, modules):
    """The pypto modules one import statement imports (with the packages it initialises)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            pkg = module if _is_package(path) else module.rsplit(".", 1)[0]
            for _ in range(node.level - 1):
                pkg = pkg.rsplit(".", 1)[0]
            base = pkg + ("." + node.module if node.module else "")
        else:
            base = node.module or ""
        names = []
        for a in node.names:
            sub = f"{base}.{a.name}"
            names.append(sub if sub in modules else base)
    out = set()
    for name in names:
        if name != ROOT and not name.startswith(ROOT + "."):
            continue
        while name not in modules and "." in name:  # `import pypto.x.y` of a name, not a module
            name = name.rsplit(".", 1)[0]
        parts = name.split(".")
        for i in range(2, len(parts) + 1):  # the packages above it run first (but the root)
            out.add(".".join(parts[:i]))
        if name == ROOT:
            out.add(ROOT)
    return out


def import_graph():
    """({module: {imported module: line}} for module-level imports, the same for imports
    inside functions)."""
    modules = module_files()
    top, local = {}, {}
    for module, path in modules.items():
        top[module], local[module] = {}, {}
        if path is None:
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
        for node, in_function in _imports(tree):
            for target in _targets(module, path, node, modules):
                if target != module and not module.startswith(target + "."):  # a package's own parent
                    (local if in_function else top)[module].setdefault(target, node.lineno)
    return top, local


def layer_of(module):
    parts = module.split(".")
    if len(parts) == 1:
        return "top"
    return LAYER_OF_PACKAGE.get(parts[1], "top")


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    import sys
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(old)
    return out


def _describe(comp, graph, local):
    members = set(comp)
    lines = []
    for m in comp:
        for t, line in sorted(graph[m].items()):
            if t in members:
                kind = "in a function" if t in local.get(m, {}) and t not in _TOP[m] else "module level"
                lines.append(f"  {m}:{line} imports {t} ({kind})")
    return "\n".join(lines)


_TOP, _LOCAL = import_graph()


def test_the_graph_is_read():
    assert f"{ROOT}.language.decorators" in _TOP
    assert f"{ROOT}.language.function_parser" in _TOP[f"{ROOT}.language.decorators"]
    # `from pypto.runtime.tensors import x` also runs pypto/runtime/__init__.py
    modules = module_files()
    node = ast.parse("from pypto.runtime.tensors import is_tensor").body[0]
    assert _targets("pypto.jit.x", "x.py", node, modules) == {"pypto.runtime", "pypto.runtime.tensors"}
    # `from pypto import _core` is an import of the extension module
    assert f"{ROOT}._core" in _TOP[f"{ROOT}.language.types"]
    # every package is in a layer
    packages = {m.split(".")[1] for m in _TOP if "." in m}
    assert packages <= set(LAYER_OF_PACKAGE), packages - set(LAYER_OF_PACKAGE)


def test_no_import_circles_at_module_level():
    found = cycles(_TOP)
    assert not found, "import circles (module-level imports):\n" + "\n\n".join(
        _describe(c, _TOP, {}) for c in found)


def test_no_import_circles_with_function_local_imports():
    both = {m: {**_LOCAL[m], **_TOP[m]} for m in _TOP}
    found = cycles(both)
    assert not found, "import circles (a function-local import closes each):\n" + "\n\n".join(
        _describe(c, both, _LOCAL) for c in found)


def _upward(graph):
    bad = []
    for m, targets in sorted(graph.items()):
        if m == ROOT:
            continue  # the root puts the layers together
        lm = LAYERS.index(layer_of(m))
        for t, line in sorted(targets.items()):
            if LAYERS.index(layer_of(t)) > lm:
                bad.append(f"  {m}:{line} ({layer_of(m)}) imports {t} ({layer_of(t)})")
    return bad


@pytest.mark.parametrize("where", ["module level", "in functions"])
def test_no_import_runs_up_a_layer(where):
    bad = _upward(_TOP if where == "module level" else _LOCAL)
    assert not bad, f"imports ({where}) that run up the layer order {' < '.join(LAYERS)}:\n" + "\n".join(bad)


def test_the_checker_sees_a_circle_and_an_upward_import():
    graph = {"pypto.language.a": {"pypto.language.b": 1}, "pypto.language.b": {"pypto.language.a": 2},
             "pypto.jit": {}}
    assert cycles(graph) == [["pypto.language.a", "pypto.language.b"]]
    assert _upward({"pypto.language.a": {"pypto.jit": 3}}) == [
        "  pypto.language.a:3 (language) imports pypto.jit (jit)"]
    assert not _upward({"pypto.jit": {"pypto.language.a": 3}})


if __name__ == "__main__":  # python tests/build/test_imports.py: print today's findings
    both = {m: {**_LOCAL[m], **_TOP[m]} for m in _TOP}
    for c in cycles(_TOP):
        print("module-level circle:\n" + _describe(c, _TOP, {}))
    for c in cycles(both):
        print("circle with function-local imports:\n" + _describe(c, both, _LOCAL))
    print("upward (module level):\n" + "\n".join(_upward(_TOP)))
    print("upward (in functions):\n" + "\n".join(_upward(_LOCAL)))
