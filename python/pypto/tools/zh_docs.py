"""The Chinese docs (docs/zh/) beside the English ones: what holds the two together.

Every page under docs/ has its Chinese page at docs/zh/<same path>. A Chinese page is written
for a Chinese-speaking kernel developer (not word for word where a clearer sentence serves),
but three things are the same in both, and `check()` (run by tests/docs/test_zh_docs.py)
fails when they differ:

- the code blocks, in order and byte for byte (a program shown in the docs is one program);
- the headings' levels, in order, and their anchors: a Chinese heading carries the English
  heading's anchor as `{#anchor}` (Markdown attr_list), so `language.md#slices` links the same
  section in both languages;
- the images and the links to other pages (their targets, not their text; a Chinese page
  may link more).

`python -m pypto.tools.zh_docs [DOCS_DIR]` (default ./docs) prints the problems;
`--sync-code` copies the English code blocks into the Chinese pages where both have the same
number of blocks (after a change that only edited code), and reports the pages that need a
translator.
"""

from __future__ import annotations

import pathlib
import re
import sys
import unicodedata

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*(?:\{#([\w\-.]+)\})?\s*$")
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CJK = re.compile(r"[\u4e00-\u9fff]")


def english_pages(docs: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in docs.rglob("*.md") if "zh" not in p.relative_to(docs).parts)


def chinese_pages(docs: pathlib.Path) -> list[pathlib.Path]:
    return sorted((docs / "zh").rglob("*.md"))


def split(text: str) -> tuple[list[str], list[str]]:
    """(prose lines, code blocks): fenced blocks whole, as text; prose without them."""
    prose, blocks, cur, fence = [], [], [], None
    for line in text.splitlines():
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence, cur = m.group(2)[0] * len(m.group(2)), [line]
            else:
                prose.append(line)
        else:
            cur.append(line)
            if m and m.group(2).startswith(fence) and line.strip() == m.group(2):
                blocks.append("\n".join(cur))
                fence = None
    if fence is not None:
        blocks.append("\n".join(cur))
    return prose, blocks


def slugify(title: str) -> str:
    """The anchor Python-Markdown's toc extension (mkdocs' default) gives a heading."""
    text = re.sub(r"<[^>]*>", "", title)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def headings(prose: list[str]) -> list[tuple[int, str, str]]:
    """(level, title, anchor) of each heading, anchors made unique as the toc extension does."""
    out, seen = [], set()
    for line in prose:
        m = HEADING.match(line)
        if not m:
            continue
        anchor = m.group(3) or slugify(m.group(2))
        base, n = anchor, 1
        while anchor in seen:
            anchor, n = f"{base}_{n}", n + 1
        seen.add(anchor)
        out.append((len(m.group(1)), m.group(2), anchor))
    return out


def links(prose: list[str]) -> list[str]:
    """Targets of links and images to other files (not web pages, not anchors in the page)."""
    out = []
    for line in prose:
        for target in LINK.findall(line):
            if "://" in target or target.startswith(("#", "mailto:")):
                continue
            out.append(target)
    return sorted(out)


def zh_target(target: str) -> str:
    """A link target as the Chinese page must write it: pages stay relative (docs/zh mirrors
    docs/), images and other files stay in docs/ (one level up)."""
    path = target.split("#")[0]
    if path.endswith(".md"):
        return target
    return "../" + target


def compare(english: str, chinese: str) -> list[str]:
    """What differs between a page and its Chinese page, one line per difference."""
    e_prose, e_code = split(english)
    z_prose, z_code = split(chinese)
    problems = []
    if e_code != z_code:
        if len(e_code) != len(z_code):
            problems.append(f"{len(e_code)} code blocks in English, {len(z_code)} in Chinese")
        else:
            first = next(i for i, (a, b) in enumerate(zip(e_code, z_code)) if a != b)
            problems.append(f"code block {first + 1} differs:\n{e_code[first]}\n---\n{z_code[first]}")
    eh, zh = headings(e_prose), headings(z_prose)
    if [(lv, a) for lv, _, a in eh] != [(lv, a) for lv, _, a in zh]:
        for i, (e, z) in enumerate(zip(eh + [None] * len(zh), zh + [None] * len(eh))):
            if e is None and z is None:
                break
            if e is None or z is None or (e[0], e[2]) != (z[0], z[2]):
                want = f"{'#' * e[0]} ... {{#{e[2]}}}" if e else "no heading"
                got = f"{'#' * z[0]} {z[1]} {{#{z[2]}}}" if z else "no heading"
                problems.append(f"heading {i + 1}: English has `{want}`, Chinese has `{got}`")
                break
    missing = sorted(set(zh_target(t) for t in links(e_prose)) - set(links(z_prose)))
    if missing:
        problems.append(f"links differ: the Chinese page lacks links to {missing}")
    cjk = len(CJK.findall("\n".join(z_prose)))
    words = len(re.findall(r"[A-Za-z]+", "\n".join(e_prose)))
    generated = GENERATED_MARK in chinese
    if cjk < 100 or (not generated and cjk < 0.5 * words):
        problems.append(f"only {cjk} Chinese characters in the prose ({words} English words): not a translation")
    return problems


def check(docs: pathlib.Path) -> dict[str, list[str]]:
    """{page: problems} for every page whose Chinese page is missing or out of step."""
    out = {}
    for page in english_pages(docs):
        rel = page.relative_to(docs)
        zh = docs / "zh" / rel
        if not zh.exists():
            out[str(rel)] = [f"no Chinese page: write docs/zh/{rel}"]
            continue
        problems = compare(page.read_text(), zh.read_text())
        if problems:
            out[str(rel)] = problems
    for zh in chinese_pages(docs):
        rel = zh.relative_to(docs / "zh")
        if not (docs / rel).exists():
            out[f"zh/{rel}"] = [f"no English page docs/{rel} for this Chinese page"]
    return out


def sync_code(docs: pathlib.Path) -> list[str]:
    """Copies English code blocks into the Chinese pages, block by block, where the counts
    agree; returns the pages whose counts differ (they need a translator)."""
    todo = []
    for page in english_pages(docs):
        zh = docs / "zh" / page.relative_to(docs)
        if not zh.exists():
            todo.append(str(page.relative_to(docs)))
            continue
        _, e_code = split(page.read_text())
        text = zh.read_text()
        _, z_code = split(text)
        if len(e_code) != len(z_code):
            todo.append(str(page.relative_to(docs)))
            continue
        pos = 0
        for old, new in zip(z_code, e_code):
            at = text.index(old, pos)
            text = text[:at] + new + text[at + len(old):]
            pos = at + len(new)
        zh.write_text(text)
    return todo


def main(argv: list[str]) -> int:
    dirs = [a for a in argv if not a.startswith("--")]
    docs = pathlib.Path(dirs[0] if dirs else "docs")
    if not docs.is_dir():
        print(f"pypto.tools.zh_docs: no docs directory at {docs.resolve()}; fix: run it from the checkout's root or pass DOCS_DIR")
        return 2
    if "--sync-code" in argv:
        for page in sync_code(docs):
            print(f"{page}: code blocks differ in number; translate by hand")
    problems = check(docs)
    for page, items in problems.items():
        for item in items:
            print(f"docs/{page}: {item}")
    return 1 if problems else 0


# The generated reference pages (ops.md, passes.md, isa.md) have generated Chinese pages: a
# Chinese title and introduction above the same generated body. The body's records (op and
# instruction descriptions) are single sources of truth kept in English in the C++ records.
GENERATED_MARK = "自动生成，请勿手改"
GENERATED_TITLES = {
    "Ops reference": "算子参考",
    "The pass pipeline": "Pass 流水线",
    "The kernel pipeline": "Kernel 流水线",
    "PTO instruction table": "PTO 指令表",
}
GENERATED_INTROS = {
    "ops.md": (
        "> 本页由 `python -m pypto.tools.gen_docs` 从算子注册表（`src/ops/families/`）自动生成，请勿手改。\n"
        "> 下面每个算子的签名、参数、默认值和说明来自它在 C++ 中唯一的一条记录，因此保留英文原文；\n"
        "> 表格与英文页逐字相同。读法：`pl.<name>` 的第一个实参是 tile 时解析为 tile 算子，是张量时解析为\n"
        "> tensor 算子；第二个实参是标量时选用标量形式（例如 `pl.add(t, 2.0)` 即 `tile.adds`）。\n"
        "> 参数后标注的存储空间（Vec、Mat、Left、Right、Acc、DDR）是该操作数必须所在的位置，类型规则与\n"
        "> InferMemory 都读这同一条记录。新增算子的步骤见[架构](architecture.md)一页。"
    ),
    "passes.md": (
        "> 本页由 `python -m pypto.tools.gen_docs` 从 Pass 流水线自动生成，请勿手改。每个 Pass 的说明是\n"
        "> `src/passes/` 中该 Pass 自带的文字（保留英文原文）。顺序就是每次编译实际运行的顺序：\n"
        "> 每个 Pass 之后都会校验 IR；设置 `RunConfig(dump_passes=True)` 后，凡是改变了程序的 Pass 都会在\n"
        "> `passes_dump/` 下写出一份可重新解析的程序文本，便于对比前后差异。kernel 流水线在代码生成之后\n"
        "> 作用于每个 kernel 的指令流（例如 InsertSync 插入同步）。新增 Pass 的步骤见[架构](architecture.md)一页。"
    ),
    "isa.md": (
        "> 本页由 `python tools/gen_isa_doc.py` 从指令记录（`src/isa/families/`）自动生成，请勿手改。\n"
        "> 每条 PTO 虚拟指令的签名、允许的数据类型、目标存储空间和代价模型都来自它在 C++ 中唯一的一条\n"
        "> 记录，参考实现（仿真引擎）与优化库（原生引擎）之间由差分测试保证逐位一致，因此表格保留英文。\n"
        "> 要点：浮点运算一律按 FP32 逐步计算、最后一次舍入到目标类型；归约的求和顺序是固定的二叉树；\n"
        "> 标量整数除法与取模遵循 Python 语义（向负无穷取整）。代价中的 R 表示按 256 字节计的向量重复次数。"
    ),
}


def generated_page(name: str, english: str) -> str:
    """The Chinese page of a generated reference page (see GENERATED_INTROS)."""
    lines, out, intro_done = english.splitlines(), [], False
    for line in lines:
        m = HEADING.match(line)
        if m and len(m.group(1)) == 1 and m.group(2) in GENERATED_TITLES:
            out.append(f"# {GENERATED_TITLES[m.group(2)]} {{#{slugify(m.group(2))}}}")
            if not intro_done:
                out += ["", GENERATED_INTROS[name]]
                intro_done = True
            continue
        out.append(line)
    return "\n".join(out) + ("\n" if english.endswith("\n") else "")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
