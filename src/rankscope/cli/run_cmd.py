"""``rankscope run``: run a baseline (bm25, dense, hybrid) or your own retriever over a test set and
write the TREC run, so that runs can be compared and gated without writing Python::

    rankscope run bm25 --testset questions.json --corpus corpus.jsonl --out bm25.trec --qrels-out qrels.txt
    rankscope run dense --testset questions.json --corpus corpus.jsonl --out dense.trec
    rankscope run --retriever mymodule:search --testset questions.json --out mine.trec
    rankscope compare --qrels qrels.txt bm25.trec dense.trec mine.trec -m ndcg@10

The corpus comes from ``--corpus`` (JSONL ``{"_id"|"id", "text", "title"?}``, JSON ``{id: text}``,
TSV/CSV ``id, text``) or from the test set itself (a JSON test set with ``"corpus"``, a BEIR
folder).  ``--retriever module:object`` imports ``module`` (the current folder first on the path)
and uses ``object``: a retriever object, a function ``fn(query, k)``, or a class, instantiated
without arguments.  The evaluation summary — metrics per level, latency and every warning — is
printed; ``--json`` also writes it as JSON.  With ``--chunk-to-doc`` the written run is the
document-level (folded) one.
"""

from __future__ import annotations

import importlib
import json
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from rankscope.cli.app import app, fail, user_errors
from rankscope.cli.options import LangOption, RelevanceLevel
from rankscope.i18n import _

DEFAULT_METRICS = ["ndcg@10", "recall@10", "recall@100", "mrr", "map"]


class System(str, Enum):
    bm25 = "bm25"
    dense = "dense"
    hybrid = "hybrid"


class Relevance(str, Enum):
    auto = "auto"
    qrels = "qrels"
    answers = "answers"


def load_object(spec: str) -> Any:
    """``module:object`` -> the object (a class is instantiated without arguments)."""
    import difflib
    import inspect

    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        fail(_("--retriever must be module:object (e.g. myretriever:search), got {spec!r}", spec=spec))
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        fail(_("cannot import {module!r} for --retriever: {exc}", module=module_name, exc=exc))
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(part, names, n=1)
            if close:
                fail(_("{module!r} has no {name!r} (did you mean {close!r}?)", module=module_name, name=part,
                       close=close[0]))
            fail(_("{module!r} has no {name!r}", module=module_name, name=part))
        obj = getattr(obj, part)
    return obj() if inspect.isclass(obj) else obj


def _baseline(system: System, corpus: dict[str, str], *, model: str, tokenizer: str, depth: int,
              progress: bool) -> Any:
    from rankscope.retrieval.bm25 import BM25Retriever

    def bm25() -> Any:
        return BM25Retriever(corpus, tokenizer=tokenizer, with_text=False)

    def dense() -> Any:
        from rankscope.retrieval.dense import DenseRetriever

        return DenseRetriever(corpus, model, with_text=False)

    if system is System.bm25:
        return bm25()
    if system is System.dense:
        return dense()
    from rankscope.retrieval.hybrid import HybridRetriever

    return HybridRetriever({"bm25": bm25(), "dense": dense()}, method="rrf", depth=depth, name="hybrid")


@app.command("run")
@user_errors
def run_command(
    system: Annotated[Optional[System], typer.Argument(help="baseline: bm25, dense or hybrid")] = None,
    testset: Annotated[Path, typer.Option("--testset", "-t", show_default="none: required",
                                          help="test set: .json, .jsonl or a BEIR folder")] = Path(),
    out: Annotated[Path, typer.Option("--out", "-o", show_default="none: required",
                                      help="TREC run file to write")] = Path(),
    corpus: Annotated[Optional[Path], typer.Option("--corpus", show_default="the test set's corpus",
                                                   help="corpus: .jsonl, .json, .tsv, .csv")] = None,
    retriever: Annotated[
        Optional[str], typer.Option("--retriever", "-r", show_default="none: the SYSTEM argument",
                                    help="your retriever as module:object (instead of SYSTEM)")
    ] = None,
    k: Annotated[int, typer.Option("-k", "--k", help="hits per query kept in the run")] = 100,
    metric: Annotated[
        Optional[list[str]],
        typer.Option("-m", "--metric", show_default="ndcg@10 map mrr recall@100 P@10 hit_rate@10",
                     help="metric, repeatable"),
    ] = None,
    model: Annotated[
        str, typer.Option("--model", help="dense model: multilingual-e5-small (any language), all-MiniLM-L6-v2 "
                                          "(English), or a sentence-transformers name or path")
    ] = "multilingual-e5-small",
    tokenizer: Annotated[str, typer.Option("--tokenizer", help="BM25 tokenizer: auto, en or zh")] = "auto",
    chunk_to_doc: Annotated[
        Optional[str], typer.Option("--chunk-to-doc", show_default="none: ids are document ids",
                                    help="fold chunk ids into documents, e.g. '{doc_id}#{chunk}'")
    ] = None,
    name: Annotated[Optional[str], typer.Option("--name", show_default="the baseline's name or the retriever's",
                                                help="run name (the TREC tag)")] = None,
    cache: Annotated[Optional[Path], typer.Option("--cache", show_default="none: no resume cache",
                                                  help="JSONL resume cache")] = None,
    overwrite_cache: Annotated[
        bool, typer.Option("--overwrite-cache", help="start --cache afresh even if it holds another evaluation")
    ] = False,
    workers: Annotated[int, typer.Option("--workers", help="concurrent calls for your retriever")] = 4,
    retries: Annotated[int, typer.Option("--retries", help="extra attempts for a failing call")] = 2,
    relevance: Annotated[Relevance, typer.Option("--relevance", help="auto, qrels or answers")] = Relevance.auto,
    relevance_level: RelevanceLevel = 1,
    split: Annotated[str, typer.Option("--split", help="BEIR qrels split")] = "test",
    strict: Annotated[bool, typer.Option("--strict", help="unknown keys in the test set are an error")] = False,
    qrels_out: Annotated[
        Optional[Path], typer.Option("--qrels-out", show_default="none",
                                     help="also write the test set's judgments as TREC qrels")
    ] = None,
    json_out: Annotated[Optional[Path], typer.Option("--json", show_default="none",
                                                     help="write the evaluation summary as JSON")] = None,
    progress: Annotated[
        Optional[bool], typer.Option("--progress/--no-progress", help="progress bar (default: on a terminal)")
    ] = None,
    lang: LangOption = None,
) -> None:
    """Run a baseline (bm25, dense, hybrid) or --retriever module:object over a test set; write the TREC run.

    Examples:

      rankscope run bm25 --testset testset.jsonl --out bm25.trec

      rankscope run --retriever myapp.search:Retriever --testset testset.jsonl --out mine.trec -k 20 --cache mine.cache
    """
    import warnings

    from rankscope.data.testset import TestSet
    from rankscope.data.testset_io import read_corpus
    from rankscope.errors import InvalidParameterError
    from rankscope.io import write_trec_run
    from rankscope.retrieval.runner import evaluate_retriever

    if testset == Path():
        raise InvalidParameterError(_("--testset is required (a .json, .jsonl test set or a BEIR folder)"))
    if out == Path():
        raise InvalidParameterError(_("--out is required (the TREC run file to write)"))
    if (system is None) == (retriever is None):
        raise InvalidParameterError(_("give a baseline (bm25, dense, hybrid) or --retriever module:object, one of "
                                      "them"))
    show = sys.stderr.isatty() if progress is None else progress
    with warnings.catch_warnings():  # every warning is in the summary printed below
        warnings.simplefilter("ignore")
        ts = TestSet.from_file(testset, split=split, strict=strict)
        if corpus is not None:
            ts = TestSet(ts.queries, ts.qrels, read_corpus(corpus), ts.name, ts.issues)
        if retriever is not None:
            r = load_object(retriever)
        else:
            assert system is not None
            if ts.corpus is None:
                raise InvalidParameterError(_("{system} needs the documents: pass --corpus FILE, or a test set "
                                              'with a corpus (JSON with "corpus", or a BEIR folder)',
                                              system=system.value))
            r = _baseline(system, ts.corpus, model=model, tokenizer=tokenizer, depth=max(k, 100), progress=show)
        run_name = name or (system.value if system is not None else None)
        ev = evaluate_retriever(r, ts, metric or DEFAULT_METRICS, k=k, workers=workers, retries=retries,
                                cache=cache, overwrite_cache=overwrite_cache, progress=show,
                                chunk_to_doc=chunk_to_doc, name=run_name, relevance=relevance.value,
                                relevance_level=relevance_level)
    assert ev.doc_run is not None
    write_trec_run(ev.doc_run, out, tag=ev.run.name)
    if qrels_out is not None:
        from rankscope.io.trec import write_trec_qrels

        write_trec_qrels(ts.qrels, qrels_out)
    if json_out is not None:
        json_out.write_text(json.dumps(ev.to_dict(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    from rankscope.cli.messages import print_lines

    lg = lang.value if lang is not None else "en"
    written = _("run written to {out} ({n} rows)", out=out, n=len(ev.doc_run)).text(lg)
    if qrels_out is not None:
        written += _("; judgments to {out}", out=qrels_out).text(lg)
    print_lines([*ev.summary(lg).splitlines(), written], lg)
