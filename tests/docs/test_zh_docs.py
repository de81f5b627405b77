"""The Chinese docs: every page under docs/ has docs/zh/<same path>, with the same code blocks,
the same headings' anchors and the same link targets (pypto.tools.zh_docs; fix a code-only
change with `python -m pypto.tools.zh_docs --sync-code`)."""

import pathlib

import pytest
from pypto.tools import zh_docs

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
PAGES = [str(p.relative_to(DOCS)) for p in zh_docs.english_pages(DOCS)]


@pytest.mark.parametrize("page", PAGES)
def test_page_has_a_chinese_page_in_step(page):
    problems = zh_docs.check(DOCS).get(page, [])
    assert not problems, f"docs/{page} vs docs/zh/{page}:\n" + "\n".join(problems)


def test_no_chinese_page_without_an_english_one():
    orphans = {p: v for p, v in zh_docs.check(DOCS).items() if p.startswith("zh/")}
    assert not orphans, orphans


def test_the_site_lists_every_chinese_page_and_switches_language():
    root = DOCS.parent
    nav = (root / "mkdocs.yml").read_text()
    for page in PAGES:
        assert f"zh/{page}" in nav, f"mkdocs.yml nav lacks zh/{page}"
    theme = (root / "docs_theme" / "main.html").read_text()
    assert "'zh/' ~ page.url" in theme and "English" in theme


def test_the_checker_sees_a_changed_code_block_a_lost_anchor_and_a_missing_link(tmp_path):
    en = "# Title\n\nSee [ops](ops.md) and ![x](report.png).\n\n```python\nx = 1\n```\n\n## Two words\n"
    zh = ("# 标题 {#title}\n\n参见[算子](ops.md)与![x](../report.png)。" + "这是一段足够长的中文说明文字，用来检验检查器。" * 6 + "\n\n"
          "```python\nx = 1\n```\n\n## 两个词 {#two-words}\n")
    assert zh_docs.compare(en, zh) == []
    assert any("code block 1" in p for p in zh_docs.compare(en, zh.replace("x = 1", "x = 2")))
    assert any("heading 2" in p for p in zh_docs.compare(en, zh.replace(" {#two-words}", "")))
    assert any("links differ" in p for p in zh_docs.compare(en, zh.replace("(../report.png)", "(other.png)")))
    assert any("not a translation" in p for p in zh_docs.compare(en * 20, en.replace("# Title", "# Title {#title}") * 20))
    (tmp_path / "zh").mkdir()
    (tmp_path / "a.md").write_text(en.replace("x = 1", "x = 3"))
    (tmp_path / "zh" / "a.md").write_text(zh)
    assert zh_docs.sync_code(tmp_path) == []
    assert zh_docs.check(tmp_path) == {}
    assert "x = 3" in (tmp_path / "zh" / "a.md").read_text()
