"""Load the collections bundled with rankscope: :func:`load_dataset`, :func:`list_datasets`.

Each collection lives in a folder next to this module in BEIR layout, gzipped:
``corpus.jsonl.gz`` (``_id``, ``text``, optional ``title``), ``queries.jsonl.gz``
(``_id``, ``text``, optional ``answers``) and ``qrels.tsv.gz`` (header
``query-id corpus-id score``).  ``catalog.json`` describes them (language,
counts, licence, source); ``README.md`` gives the full attribution.

A document's text is ``title + " " + text`` when it has a title (the BEIR
convention).

>>> [d["name"] for d in list_datasets()]
['cmrc2018', 'cranfield']
>>> ts = load_dataset("cranfield")
>>> len(ts), len(ts.corpus), int(ts.qrels.grades.max())
(225, 1400, 4)
"""

from __future__ import annotations

import functools
import gzip
import json
from importlib import resources
from importlib.abc import Traversable
from types import MappingProxyType
from typing import Any

from rankscope.data.qrels import Qrels
from rankscope.data.testset import Query, TestSet
from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _

__all__ = ["load_dataset", "list_datasets", "dataset_info"]


def _root() -> Traversable:
    return resources.files("rankscope.datasets")


@functools.cache
def _catalog() -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = json.loads(_root().joinpath("catalog.json").read_text("utf-8"))
    return data


def list_datasets() -> list[dict[str, Any]]:
    """One dict per bundled collection (``name`` plus the fields of ``catalog.json``), sorted by name."""
    return [{"name": name, **info} for name, info in sorted(_catalog().items())]


def dataset_info(name: str) -> dict[str, Any]:
    """The catalog entry of ``name``; :class:`~rankscope.errors.InvalidParameterError` if unknown."""
    catalog = _catalog()
    if name not in catalog:
        names = Items(tuple(sorted(catalog)))
        raise InvalidParameterError(_("unknown dataset {name!r}; bundled datasets: {names} (run `rankscope "
                                      "datasets list`)", name=name, names=names))
    return {"name": name, **catalog[name]}


def _lines(folder: Traversable, filename: str) -> list[str]:
    with folder.joinpath(filename).open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as fh:
        return fh.read().splitlines()


def load_dataset(name: str) -> TestSet:
    """The bundled collection ``name`` as a :class:`~rankscope.data.testset.TestSet` (queries, qrels, corpus)."""
    info = dataset_info(name)
    folder = _root().joinpath(name)
    corpus: dict[str, str] = {}
    for line in _lines(folder, "corpus.jsonl.gz"):
        doc = json.loads(line)
        title, text = str(doc.get("title") or "").strip(), str(doc.get("text") or "")
        corpus[str(doc["_id"])] = f"{title} {text}" if title and text else (title or text)
    queries = []
    for line in _lines(folder, "queries.jsonl.gz"):
        q = json.loads(line)
        meta = MappingProxyType({"language": info["language"]})
        queries.append(Query(str(q["_id"]), str(q["text"]), tuple(q.get("answers") or ()), meta))
    rows = [line.split("\t") for line in _lines(folder, "qrels.tsv.gz")[1:] if line.strip()]
    qrels = Qrels([r[0] for r in rows], [r[1] for r in rows], [int(r[2]) for r in rows])
    spans = None
    if folder.joinpath("spans.tsv.gz").is_file():  # span judgments: query-id corpus-id start end grade
        from rankscope.data.spans import SpanQrels

        cols = list(zip(*(line.split("\t") for line in _lines(folder, "spans.tsv.gz")[1:] if line.strip())))
        spans = SpanQrels(cols[0], cols[1], [int(x) for x in cols[2]], [int(x) for x in cols[3]],
                          [int(x) for x in cols[4]])
    return TestSet(queries, qrels, corpus, name, spans=spans)
