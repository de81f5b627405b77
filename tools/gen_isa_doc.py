"""Regenerates docs/isa.md and its Chinese page docs/zh/isa.md from the instruction records
(run after changing src/isa/families/)."""

import pathlib

from pypto import isa
from pypto.tools.zh_docs import generated_page

docs = pathlib.Path(__file__).resolve().parent.parent / "docs"
text = isa.table_markdown()
(docs / "isa.md").write_text(text)
(docs / "zh").mkdir(exist_ok=True)
(docs / "zh" / "isa.md").write_text(generated_page("isa.md", text))
print("wrote", docs / "isa.md", "and", docs / "zh" / "isa.md")
