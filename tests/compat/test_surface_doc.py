"""The contract: every single-chip name, keyword, enum member and attribute that
../shared/docs/pypto-surface.md lists for PyPTO is known to this package. A gap fails here
unless surface_pending.txt lists it with the reason it is not done yet; an entry there that is
no longer a gap fails too, so the list only shrinks."""

import os

import pytest

from . import surface_doc

PENDING = os.path.join(os.path.dirname(__file__), "surface_pending.txt")


def _pending():
    entries = {}
    if os.path.exists(PENDING):
        with open(PENDING, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line.strip() or line.startswith("#"):
                    continue
                what, _, why = line.partition("  # ")
                entries[what.strip()] = why.strip()
    return entries


@pytest.fixture(scope="module")
def gaps():
    if not os.path.exists(surface_doc.DOC):
        pytest.skip(f"the surface doc is not beside the checkout ({surface_doc.DOC})")
    return [what for _, what in surface_doc.gaps()]


def _key(what):
    return what.split(" (", 1)[0]


def test_the_doc_is_read():
    if not os.path.exists(surface_doc.DOC):
        pytest.skip("no surface doc")
    rows = surface_doc.read_rows()
    names = {(r.namespace, r.name) for r in rows}
    assert len(rows) > 500
    assert ("pl", "at") in names and ("pl.tile", "load") in names and ("pypto.runtime", "RunConfig") in names
    at = next(r for r in rows if (r.namespace, r.name) == ("pl", "at"))
    assert {"level", "name_hint", "optimizations", "windowize"} <= set(at.params)


def test_every_listed_name_and_keyword_is_known(gaps):
    pending = _pending()
    unknown = [g for g in gaps if _key(g) not in pending]
    assert not unknown, "names / keywords of PyPTO unknown to pypto:\n" + "\n".join(unknown)


def test_pending_list_only_shrinks(gaps):
    still = {_key(g) for g in gaps}
    done = [p for p in _pending() if p not in still]
    assert not done, "no longer gaps, remove from surface_pending.txt:\n" + "\n".join(done)
