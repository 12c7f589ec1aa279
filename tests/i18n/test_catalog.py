"""The message catalog: every English message of the code and the templates has its Chinese, once.

The English is the message id, written in the code (``_("...")``, ``ngettext``, ``pgettext``, ``N_``, ``NC_``) and
the templates; ``make catalog`` extracts it with Babel (``babel.cfg``), merges it into
``locale/zh/LC_MESSAGES/rankscope.po`` and compiles the ``.mo`` the package reads.  These tests extract again, the
same way, and check the ``.po`` against what they find: a message nobody translated, or whose English changed since
(fuzzy: said in English until its translation is looked at), is named.  The vocabulary and punctuation of the
Chinese are checked by test_zh_vocabulary.py, which reads the same ``.po``.
"""

from __future__ import annotations

import io
import string
from functools import cache
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_keywords, parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from rankscope.i18n import Message, _, catalog, gettext, ngettext

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "src" / "rankscope" / "locale"
PO = LOCALE / "zh" / "LC_MESSAGES" / "rankscope.po"
MO = PO.with_suffix(".mo")

Key = tuple[str | None, str]  # (context, msgid); a plural entry by its singular


@cache
def extracted() -> dict[Key, tuple[str, ...]]:
    """Every message of the source as ``make catalog`` extracts it: (context, msgid) -> the English forms."""
    with (ROOT / "babel.cfg").open(encoding="utf-8") as handle:
        method_map, options_map = parse_mapping_cfg(handle)
    keywords = {**DEFAULT_KEYWORDS, **parse_keywords(["NC_:1c,2"])}
    found: dict[Key, tuple[str, ...]] = {}
    for _file, _line, msg, _comments, context in extract_from_dir(str(ROOT), method_map, options_map, keywords,
                                                                 strip_comment_tags=True):
        forms = (msg,) if isinstance(msg, str) else tuple(msg)
        found[context, forms[0]] = forms
    return found


@cache
def po() -> Catalog:
    with PO.open("rb") as handle:
        return read_po(handle)


def _key(message: object) -> Key:
    msgid = message.id  # type: ignore[attr-defined]
    return message.context, msgid if isinstance(msgid, str) else msgid[0]  # type: ignore[attr-defined]


def _name(key: Key) -> str:
    return f"{key[0]}|{key[1]}" if key[0] else key[1]


@pytest.mark.slow
def test_the_source_is_extracted() -> None:
    found = extracted()
    assert len(found) > 1000, len(found)
    # one from the code, one from inside an f-string, one from a dashboard template, one from a report template
    assert (None, "unknown metric {name!r}; did you mean: {suggestions}?") in found
    assert ("job status", "running") in found and (None, "What each metric measures") in found


def test_every_message_has_a_chinese_translation() -> None:
    entries = {_key(m): m for m in po() if m.id}
    missing = [_name(k) for k in extracted() if k not in entries]
    assert not missing, f"{len(missing)} messages are not in the catalog (run make catalog): {missing[:20]}"
    untranslated = [_name(k) for k in extracted()
                    if not all(s.strip() for s in _strings(entries[k])) or entries[k].fuzzy]
    assert not untranslated, (f"{len(untranslated)} messages have no Chinese, or a fuzzy one (their English changed "
                              f"since they were translated; they are said in English): {untranslated[:20]}")


def test_the_catalog_holds_no_message_the_source_no_longer_says() -> None:
    stale = [_name(_key(m)) for m in po() if m.id and _key(m) not in extracted()]
    assert not stale, f"{len(stale)} entries of the catalog are said nowhere (run make catalog): {stale[:20]}"
    assert not po().obsolete, list(po().obsolete)[:20]


def _strings(message: object) -> tuple[str, ...]:
    said = message.string  # type: ignore[attr-defined]
    return (said,) if isinstance(said, str) else tuple(said)


def _fields(text: str) -> dict[str, set[str]]:
    """The replacement fields of a ``str.format`` template: name -> its format specs (``.3f``; a conversion such as
    ``!r`` may differ: Chinese quotes a name as it likes)."""
    out: dict[str, set[str]] = {}
    for _lit, name, spec, _conversion in string.Formatter().parse(text):
        if name is not None:
            out.setdefault(name, set()).add(spec or "")
    return out


def test_translations_fill_the_same_placeholders() -> None:
    wrong = []
    for m in po():
        if not m.id:
            continue
        ids = (m.id,) if isinstance(m.id, str) else tuple(m.id)
        for said in _strings(m):
            # a plural's Chinese form holds the plural's placeholders (one form for every n); a value may be said
            # twice, each time with a spec the English gives it
            english, chinese = _fields(ids[-1]), _fields(said)
            if said and (chinese.keys() != english.keys() or any(chinese[k] - english[k] for k in chinese)):
                wrong.append(f"{_name(_key(m))}: {english} != {chinese}")
    assert not wrong, wrong[:20]


def test_plural_entries_have_their_forms() -> None:
    nplurals = po().num_plurals
    assert nplurals == 1  # Chinese: one form for every count
    short = [_name(_key(m)) for m in po() if m.pluralizable and len(_strings(m)) != nplurals]
    assert not short, short


def test_the_compiled_catalog_is_the_compilation_of_the_po() -> None:
    """The .mo is committed (a clone or a wheel needs no build step): it must be what ``make catalog`` compiles."""
    compiled = io.BytesIO()
    write_mo(compiled, po(), use_fuzzy=False)
    assert MO.read_bytes() == compiled.getvalue(), "rankscope.mo is not the compilation of rankscope.po: make catalog"


def test_a_message_without_a_translation_is_said_in_english() -> None:
    new = _("a sentence written today, not translated yet ({n})", n=2)
    assert new.text("zh") == str(new) == "a sentence written today, not translated yet (2)"
    fuzzy = [m for m in po() if m.fuzzy]  # a fuzzy translation is left out of the .mo: English until looked at
    assert all(catalog("zh").gettext(m.id) == m.id for m in fuzzy if isinstance(m.id, str) and not m.context)


@pytest.mark.parametrize("n", [1, 2])
def test_a_message_is_a_value_said_in_the_readers_language(n: int) -> None:
    said = ngettext("{n} query", "{n} queries", n)
    assert str(said) == f"{n} {'query' if n == 1 else 'queries'}" and said.text("zh") == f"{n} 个查询"
    assert Message.from_dict(said.to_dict()) == said
    assert gettext("best", "zh") == "最佳" and gettext("best", "en") == "best"
