"""Every environment variable pypto reads is declared once, in the registry of
include/pypto/base/env.h (pypto._core.env_vars()), with whether it changes the kernel cache key,
and docs/tools.md ("Environment variables", and its Chinese page) lists exactly the registry."""

import pathlib
import re

from pypto import _core

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = ["src", "include", "python/pypto", "python/bindings", "benchmarks", "examples"]
QUOTED = re.compile(r"""["'](PYPTO_[A-Z0-9_]+)["'=]""")


def registry():
    return {name: (summary, key) for name, summary, key in _core.env_vars()}


def named_in_code():
    found = {}
    for top in SOURCES:
        for f in (ROOT / top).rglob("*"):
            if f.suffix in (".py", ".cpp", ".h") and f.is_file():
                for m in QUOTED.finditer(f.read_text(errors="replace")):
                    found.setdefault(m.group(1), str(f.relative_to(ROOT)))
    return found


def test_every_pypto_variable_the_code_names_is_registered():
    reg = registry()
    unknown = {n: f for n, f in named_in_code().items() if n not in reg}
    assert not unknown, f"add these to env_vars() in src/base/env.cpp (and docs/tools.md): {unknown}"


def test_every_registered_variable_is_read_somewhere():
    code = "".join(f.read_text(errors="replace") for top in SOURCES for f in (ROOT / top).rglob("*")
                   if f.suffix in (".py", ".cpp", ".h") and f.is_file())
    stale = [n for n in registry() if code.count(f'"{n}"') < 2]  # the registry's record and a read
    assert not stale, f"registered but read nowhere: {stale}"


def test_the_cache_key_variables_are_the_registry_s():
    reg = registry()
    assert [n for n, _ in _core.cache_key_env_vars()] == [n for n, (_, key) in reg.items() if key]
    assert reg["PYPTO_NATIVE_ISA"][1] and not reg["PYPTO_CACHE_DIR"][1]


def test_the_docs_table_lists_the_registry_in_order():
    names = list(registry())
    for page, yes in (("docs/tools.md", "yes"), ("docs/zh/tools.md", "是")):
        text = (ROOT / page).read_text()
        rows = re.findall(r"^\| `([A-Z_0-9]+)` \| (\S+) \|", text, re.M)
        assert [n for n, _ in rows] == names, page
        assert [n for n, k in rows if k == yes] == [n for n in names if registry()[n][1]], page
