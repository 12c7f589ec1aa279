"""One Chinese vocabulary in every Chinese text rankscope shows (issue 17 §5).

Eight parts of the package were translated in parallel; these tests keep their words one: a run is 结果 (its file
结果文件), never 运行 / 运行结果 as a noun (运行 stays the verb "to run a command"); an id is 编号, never "ID"; a
judgment is 标注 and a document without one is 未评判; a score is 得分, never 分数; 标签 is only a TREC tag
(TREC 标签); the -l option is the 相关性等级; a corpus is 语料库.  And the typography the files share: a space
between Chinese and a Latin word or a number (``5 个查询``, ``bm25 的结果``), full-width punctuation in Chinese
sentences.

The texts checked: the message catalog (``locale/zh/LC_MESSAGES/rankscope.po``: the help of the command line and
the metric summaries, the Chinese terms of the settings (:data:`rankscope.choices.TERMS`), the dataset
catalog's text fields, the notes of the interpretation guide), the Chinese strings of the source and the Chinese pages
(``README.zh-CN.md``, ``docs/zh/*.md``).  Not checked: the guide's texts quoted from seed 000 (the catalog's context
``guide``; their transcription must stay exact: ``tests/interpret/test_interpret_seed_transcription.py``), the
prompts sent to a model
(``labels/prompts.json``: what the model reads, not the user) and patterns that read a model's reply.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "rankscope"
CJK = re.compile(r"[\u4e00-\u9fff]")

#: words the vocabulary rules out, each with what to write instead
RULED_OUT: dict[str, tuple[re.Pattern[str], str]] = {
    "run": (re.compile(r"运行结果|各运行|所有运行|每个运行|运行中的|运行中为|运行文件|运行与|运行 \{|运行（run）"),
                       "a run is 结果 (结果文件 for its file); 运行 is only the verb"),
    "id": (re.compile(r"(?<![A-Za-z0-9_])ID(?![A-Za-z0-9_])"), "an id is 编号 (查询编号、文档编号、块编号)"),
    "tag": (re.compile(r"(?<!TREC )标签"), "a judgment is 标注; 标签 is only the run's tag: TREC 标签"),
    "score": (re.compile(r"分数"), "a score is 得分"),
    "unjudged": (re.compile(r"未标注(?:的)?文档|没有标注的文档"), "a document without a judgment is 未评判"),
    "relevance_level": (re.compile(r"相关性阈值|相关度"), "the relevance level (-l) is 相关性等级; a grade is 等级"),
    "corpus": (re.compile(r"文档库|语料(?!库)"), "a corpus is 语料库"),
    "chunk": (re.compile(r"切块|分块编号|分块标注"), "a chunk is 块 (块编号、块标注); 分块 is the chunking"),
    "depth": (re.compile(r"截断深度"), "depth is 深度, a cutoff 截断值"),
    "judge": (re.compile(r"标注员|评判人"), "who judges is a 评判员"),
    "provenance": (re.compile(r"来源记录"), "a provenance file is a 来源说明文件"),
}
#: a Chinese character touching a Latin letter or a digit: they are separated by a space
UNSPACED = re.compile(r"[\u4e00-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u4e00-\u9fff]")
#: ASCII punctuation touching a Chinese character (mixed punctuation)
MIXED = re.compile(r"[\u4e00-\u9fff][:,;()?!]|[,;:(][\u4e00-\u9fff]")
#: a reStructuredText literal in a docstring
_LITERAL = re.compile(r"``.*?``", re.S)
#: code and names in a text, where neither the words nor the spacing are prose: `code`, quoted values, {fields},
#: option names, URLs, paths and names with dots, @, =, _ or / in them
_CODE = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|\{[^{}]*\}|https?://\S+|[A-Za-z0-9.+-]*[@=_/.:][A-Za-z0-9_.@=/:+-]*")


def _walk(value: object, where: str, skip_en: bool = True) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if not (skip_en and key == "en"):
                yield from _walk(item, f"{where}/{key}", skip_en)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, f"{where}[{i}]", skip_en)
    elif isinstance(value, str) and CJK.search(value):
        yield where, value


def _json(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


def _source_strings(path: Path) -> Iterator[tuple[str, str]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and CJK.search(node.value):
            if "(?:" in node.value or "\\s" in node.value:  # a pattern that reads a model's reply, not a text shown
                continue
            yield f"py:{path.relative_to(ROOT)}:{node.lineno}", node.value


def _page_lines(path: Path) -> Iterator[tuple[str, str, bool]]:
    """(where, line, in a code block) of a Chinese page."""
    fenced = False
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if CJK.search(line):
            yield f"{path.relative_to(ROOT)}:{n}", line, fenced


@cache
def texts() -> tuple[tuple[str, str], ...]:
    """Every Chinese text rankscope shows: (where, text), read once for the tests of this file."""
    return tuple(_texts())


def _texts() -> Iterator[tuple[str, str]]:
    from babel.messages.pofile import read_po

    with (SRC / "locale" / "zh" / "LC_MESSAGES" / "rankscope.po").open("rb") as handle:
        for m in read_po(handle):
            if m.id:
                msgid = m.id if isinstance(m.id, str) else m.id[0]
                for text in (m.string if isinstance(m.string, tuple) else (m.string,)):
                    if m.context != "guide":  # the guide's own words, transcribed exactly
                        yield f"locale/zh/rankscope.po:{m.context + '|' if m.context else ''}{msgid}", text
    for path in sorted(SRC.rglob("*.py")):
        yield from _source_strings(path)
    for path in [ROOT / "README.zh-CN.md", *sorted((ROOT / "docs" / "zh").glob("*.md"))]:
        yield from ((w, line) for w, line, _ in _page_lines(path))


def prose() -> Iterator[tuple[str, str]]:
    """The texts whose typography is checked: the message, help and dashboard files, the terms, the summaries,
    the catalog, the notes, and the pages' lines outside code blocks (a code block shows data as it is: a query
    written 什么是BM25？ by its user)."""
    for where, text in texts():
        if ".md:" in where or where.startswith("py:"):
            continue
        yield where, text
    for path in [ROOT / "README.zh-CN.md", *sorted((ROOT / "docs" / "zh").glob("*.md"))]:
        yield from ((w, line) for w, line, fenced in _page_lines(path) if not fenced and not line.startswith("<!--"))


def _prose_only(text: str) -> str:
    return _CODE.sub(" ", text)


def _checked(where: str, text: str, word: str) -> str:
    """What of ``text`` the word ``word`` is looked for in: "ID" outside code (``doc_id`` and 'ID' are names);
    the others everywhere but in a docstring's ````literal```` (a pattern's words: ````分数````)."""
    if word == "id":
        return _prose_only(text)
    return _LITERAL.sub(" ", text) if where.startswith("py:") else text


def test_the_texts_are_found() -> None:
    found = list(texts())
    places = {w.split("/")[0].split(":")[0] for w, _ in found}
    assert len(found) > 1500, len(found)
    assert {"README.zh-CN.md", "docs", "locale", "py"} <= places, places


@pytest.mark.parametrize("word", sorted(RULED_OUT))
def test_no_word_the_vocabulary_rules_out(word: str) -> None:
    pattern, instead = RULED_OUT[word]
    bad = [f"{where}: {text}" for where, text in texts() if pattern.search(_checked(where, text, word))]
    assert not bad, f"{word}: {instead}\n" + "\n".join(bad)


def test_chinese_and_latin_words_or_numbers_are_spaced() -> None:
    bad = [f"{where}: {text}" for where, text in prose() if UNSPACED.search(_prose_only(text))]
    assert not bad, "a space between Chinese and a Latin word or a number:\n" + "\n".join(bad)


#: the fields of the message files that are filled with Chinese words (a phrase said in the reader's language, a
#: term), so that they touch the Chinese around them; every other field holds a number or a name: spaced
SAID_FIELDS = {"what", "top", "records", "where", "where_found", "alt", "first", "test", "correction", "cause", "head",
               "base", "relevance", "description", "type", "missing_from_run", "not_in_qrels"}
_TOUCHING = re.compile(r"(?<=[\u4e00-\u9fff])\{(\w+)[^{}]*\}|\{(\w+)[^{}]*\}(?=[\u4e00-\u9fff])")


def test_a_number_or_a_name_filled_in_is_spaced_from_the_chinese() -> None:
    bad = []
    for where, text in prose():
        if ".md:" in where:
            continue
        for m in _TOUCHING.finditer(text.replace("{level}层", "层")):  # the level of an evaluation: 文档层
            if (m.group(1) or m.group(2)) not in SAID_FIELDS:
                bad.append(f"{where}: {m.group(0)} in {text}")
    assert not bad, "a space between Chinese and a field holding a number or a name:\n" + "\n".join(bad)


def test_chinese_sentences_use_full_width_punctuation() -> None:
    bad = [f"{where}: {text}" for where, text in prose() if MIXED.search(_prose_only(text))]
    assert not bad, "full-width punctuation next to Chinese:\n" + "\n".join(bad)


def test_the_checks_catch_what_they_are_for() -> None:
    assert RULED_OUT["run"][0].search("各运行前 10 篇文档")
    assert not RULED_OUT["run"][0].search("请运行 pip install")
    assert RULED_OUT["id"][0].search("文档ID") and not RULED_OUT["id"][0].search("IDF 与 API")
    assert RULED_OUT["tag"][0].search("标签") and not RULED_OUT["tag"][0].search("TREC 标签 {tag}")
    assert UNSPACED.search(_prose_only("50个查询")) and not UNSPACED.search(_prose_only("前 {k} 个、ndcg@10 的值"))
    assert MIXED.search("查询(3)") and not MIXED.search(_prose_only("（例如 'fixed:256'）"))
