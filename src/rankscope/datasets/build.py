"""Rebuild the bundled collections from the shared data folder (maintainers only).

``python -m rankscope.datasets.build ../shared/data`` reads the source folders
named in ``catalog.json`` and writes ``<name>/corpus.jsonl.gz``,
``<name>/queries.jsonl.gz`` and ``<name>/qrels.tsv.gz`` next to this file:

``cranfield``
    all 1,400 documents (``text`` only: the abstract already starts with the
    title), all 225 queries (ordinal ids, as in the qrels), graded qrels
    ``qrels.tsv`` (gain 1-4, higher is better).
``cmrc2018``
    the dev split: its 848 passages (``title`` = Wikipedia article) and 3,219
    questions, each with its one relevant passage and its reference answers
    (from ``raw/cmrc2018_dev.json``), and ``spans.tsv.gz``: the answers' character
    spans in the passages as loaded (``title + " " + text``), placed by
    :func:`rankscope.data.span_build.squad_spans` from the SQuAD-style offsets.

Output is deterministic (sorted keys, fixed gzip mtime) so a rebuild gives
byte-identical files.
"""

from __future__ import annotations

import gzip
import io
import json
import sys
from collections.abc import Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _write_gz(path: Path, lines: Iterable[str]) -> None:
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        for line in lines:
            gz.write(line.encode("utf-8"))
    path.write_bytes(buf.getvalue())


def _jsonl(path: Path) -> list[dict[str, object]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _dump(obj: dict[str, object]) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n"


def build_cranfield(src: Path, out: Path) -> None:
    out.mkdir(exist_ok=True)
    docs = _jsonl(src / "corpus.jsonl")
    _write_gz(out / "corpus.jsonl.gz", (_dump({"_id": d["_id"], "text": d["text"]}) for d in docs))
    queries = _jsonl(src / "queries.jsonl")
    _write_gz(out / "queries.jsonl.gz", (_dump({"_id": q["_id"], "text": q["text"]}) for q in queries))
    _write_gz(out / "qrels.tsv.gz", (src / "qrels.tsv").read_text(encoding="utf-8").splitlines(keepends=True))


def build_cmrc2018(src: Path, out: Path) -> None:
    out.mkdir(exist_ok=True)
    raw = json.loads((src / "raw" / "cmrc2018_dev.json").read_text(encoding="utf-8"))
    answers: dict[str, list[str]] = {}
    for article in raw["data"]:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                seen: list[str] = []
                for a in qa["answers"]:
                    text = a["text"].strip()
                    if text and text not in seen:
                        seen.append(text)
                answers[qa["id"]] = seen
    qrels = (src / "qrels" / "dev.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
    judged_docs = {line.split("\t")[1] for line in qrels[1:]}
    judged_queries = {line.split("\t")[0] for line in qrels[1:]}
    docs = [d for d in _jsonl(src / "corpus.jsonl") if d["_id"] in judged_docs or str(d["_id"]).startswith("DEV_")]
    _write_gz(out / "corpus.jsonl.gz", (_dump({"_id": d["_id"], "title": d["title"], "text": d["text"]}) for d in docs))
    queries = [q for q in _jsonl(src / "queries.jsonl") if q["_id"] in judged_queries]
    _write_gz(
        out / "queries.jsonl.gz",
        (_dump({"_id": q["_id"], "text": q["text"], "answers": answers.get(str(q["_id"]), [])}) for q in queries),
    )
    _write_gz(out / "qrels.tsv.gz", qrels)
    build_cmrc2018_spans(src, out)


def build_cmrc2018_spans(src: Path, out: Path) -> None:
    """``spans.tsv.gz``: ``query-id corpus-id start end grade`` of every placed answer (see module doc)."""
    from rankscope.data.span_build import squad_spans

    corpus = {}
    for d in _jsonl(src / "corpus.jsonl"):
        title, text = str(d.get("title") or "").strip(), str(d.get("text") or "")
        corpus[str(d["_id"])] = f"{title} {text}" if title and text else (title or text)
    built = squad_spans(src / "raw" / "cmrc2018_dev.json", corpus=corpus)
    rows = ["query-id\tcorpus-id\tstart\tend\tgrade\n"]
    rows += [f"{r['query_id']}\t{r['doc_id']}\t{r['start']}\t{r['end']}\t{r['grade']}\n"
             for r in built.spans.to_records()]
    _write_gz(out / "spans.tsv.gz", rows)
    print("cmrc2018 spans: " + built.report.message())


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0] if args else "../shared/data")
    build_cranfield(root / "cranfield", HERE / "cranfield")
    build_cmrc2018(root / "zh_cmrc2018_retrieval", HERE / "cmrc2018")
    for name in ("cranfield", "cmrc2018"):
        for f in sorted((HERE / name).iterdir()):
            print(f"{f.relative_to(HERE)}\t{f.stat().st_size} bytes")


if __name__ == "__main__":
    main()
