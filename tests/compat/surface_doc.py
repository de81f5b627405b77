"""Reads PyPTO's public surface from ../shared/docs/pypto-surface.md (the contract) and asks
the package whether it knows each single-chip name, keyword, enum member and attribute.

`python tests/compat/surface_doc.py` prints every gap, most-used first; the test in
test_surface_doc.py fails on any. The doc lists PyPTO's parameters of each name and, in its
last column, what was missing when it was measured (enum members, fields, methods)."""

import enum
import inspect
import os
import re
import sys
from dataclasses import dataclass, field

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "docs", "pypto-surface.md")

# The namespaces of the single-chip surface (pld is the distributed issue).
SINGLE_CHIP = ("pl", "pl.tensor", "pl.tile", "pl.system", "pl.array", "pl.prefetch", "pl.jit", "pypto.runtime",
               "pypto.ir", "pypto.ir.pass_manager", "pypto.backend")


@dataclass
class Row:
    namespace: str
    name: str
    kind: str
    params: list            # PyPTO's parameter names (no *args/**kwargs)
    uses: int
    members: list = field(default_factory=list)  # enum members / attributes / methods from the last column
    methods: dict = field(default_factory=dict)   # method name -> its parameter names


_ENTRY = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)(\([^)]*\))?\s*\((missing|partial|renamed|rejected|ignored), (\d+)\)")


def _param_names(text):
    names = []
    for part in _split_top(text):
        part = part.strip()
        if not part or part.startswith("*") or part == "/":
            continue
        names.append(part.split("=", 1)[0].strip())
    return names


def _split_top(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def read_rows(path=DOC):
    rows, namespace = [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"## `([^`]+)`", line)
            if m:
                namespace = m.group(1)
                continue
            if namespace not in SINGLE_CHIP or not line.startswith("| `"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if len(cells) < 6:
                continue
            name = cells[0].strip("`")
            kind = cells[1]
            params = [] if "(+" in cells[2] else _param_names(cells[2])
            row = Row(namespace, name, kind, params, int(cells[3]) if cells[3].isdigit() else 0)
            last = cells[5].split(" — ")[0]
            for em in _ENTRY.finditer(last):
                ename, sig = em.group(1), em.group(2)
                if sig is not None:
                    row.methods[ename] = _param_names(sig[1:-1])
                elif ename not in row.params:
                    row.members.append(ename)
            rows.append(row)
    return rows


def _resolve(namespace, name):
    """The package's object for `namespace.name`, or raises AttributeError / ImportError."""
    import importlib

    import pypto.language as pl
    roots = {"pl": pl}
    if namespace in roots:
        base = pl
    elif namespace.startswith("pl."):
        base = getattr(pl, namespace[3:])
    else:
        base = importlib.import_module(namespace)
    return getattr(base, name)


def accepted_keywords(obj):
    """The keyword names `obj` takes, or None when it takes any (a **kwargs catch-all)."""
    from pypto.language import ops
    if isinstance(obj, ops.OpStub):
        return ops.stub_keywords(obj)
    if isinstance(obj, enum.Enum) or isinstance(obj, type) and issubclass(obj, enum.Enum):
        return set()
    target = obj
    if inspect.isclass(obj):
        target = obj.__init__
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return set()
    names = set()
    for p in sig.parameters.values():
        if p.kind == p.VAR_KEYWORD:
            return None
        if p.kind != p.VAR_POSITIONAL:
            names.add(p.name)
    return names


def gaps(rows=None):
    """[(uses, 'what is missing')] over the single-chip rows."""
    out = []
    for row in rows if rows is not None else read_rows():
        label = f"{row.namespace}.{row.name}"
        try:
            obj = _resolve(row.namespace, row.name)
        except Exception as e:  # noqa: BLE001 - anything that fails to resolve is a gap
            out.append((row.uses, f"{label}: name missing ({type(e).__name__}: {e})"))
            continue
        if row.kind in ("namespace", "constant"):
            continue
        if row.kind == "enum":
            for m in row.members:
                if not hasattr(obj, m):
                    out.append((row.uses, f"{label}.{m}: enum member missing"))
            continue
        if row.kind == "type":
            for m in row.members:
                if not hasattr(obj, m) and m not in (accepted_keywords(obj) or set()):
                    out.append((row.uses, f"{label}.{m}: attribute missing"))
            for m, params in row.methods.items():
                meth = obj.__init__ if m == "__init__" else getattr(obj, m, None)
                if meth is None or (m == "__init__" and meth is object.__init__):
                    out.append((row.uses, f"{label}.{m}(): method missing"))
                    continue
                kws = accepted_keywords(meth)
                if kws is not None:
                    for p in params:
                        if p not in kws and p != "self":
                            out.append((row.uses, f"{label}.{m}(): keyword '{p}' missing"))
            continue
        kws = accepted_keywords(obj)
        if kws is None:
            continue
        for p in row.params + row.members:
            if p not in kws:
                out.append((row.uses, f"{label}: keyword '{p}' missing"))
    out.sort(key=lambda t: -t[0])
    return out


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
    found = gaps()
    for uses, what in found:
        print(f"{uses:5d}  {what}")
    print(f"{len(found)} gaps")
