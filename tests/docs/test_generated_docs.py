"""Generated reference pages in docs/ match their sources (regenerate with
`python -m pypto.tools.gen_docs`)."""

import pathlib

import pytest
from pypto.tools.gen_docs import pages

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("name", sorted(pages()))
def test_generated_page_is_current(name):
    assert (DOCS / name).read_text() == pages()[name], (
        f"docs/{name} is out of date: run `python -m pypto.tools.gen_docs`"
    )


def test_ops_page_lists_every_registered_op():
    from pypto import _core

    text = pages()["ops.md"]
    for spec in _core.ir.all_ops():
        name = spec if isinstance(spec, str) else spec.name
        assert name in text
