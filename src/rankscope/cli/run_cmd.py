"""``rankscope run``: run a baseline (bm25, dense, hybrid, openai) or your own retriever over a test set and
write the TREC run, so that runs can be compared and gated without writing Python::

    rankscope run bm25 --testset questions.json --corpus corpus.jsonl --out bm25.trec --qrels-out qrels.txt
    rankscope run dense --testset questions.json --corpus corpus.jsonl --out dense.trec
    rankscope run openai --base-url https://api.openai.com/v1 --model text-embedding-3-small \
        --api-key-env OPENAI_API_KEY --testset questions.json --corpus corpus.jsonl --out openai.trec
    rankscope run --retriever mymodule:search --testset questions.json --out mine.trec
    rankscope compare --qrels qrels.txt bm25.trec dense.trec mine.trec -m ndcg@10

The corpus comes from ``--corpus`` (JSONL ``{"_id"|"id", "text", "title"?}``, JSON ``{id: text}``,
TSV/CSV ``id, text``) or from the test set itself (a JSON test set with ``"corpus"``, a BEIR
folder).  ``openai`` is the dense baseline on any OpenAI-compatible embeddings endpoint
(:mod:`rankscope.retrieval.openai_embeddings`; its vectors cached by request).  ``--retriever module:object``
imports ``module`` (the current folder first on the path) and uses ``object``: a retriever object (a
LangChain, LlamaIndex or Haystack one too), a function ``fn(query, k)``, or a class, instantiated without
arguments.  The evaluation summary — metrics per level, latency and every warning — is
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

from rankscope.choices import default_metrics
from rankscope.cli.app import app, fail, user_errors
from rankscope.cli.options import LangOption, RelevanceLevel
from rankscope.i18n import _, ngettext


class System(str, Enum):
    bm25 = "bm25"
    dense = "dense"
    hybrid = "hybrid"
    openai = "openai"


DEFAULT_DENSE_MODEL = "multilingual-e5-small"


class BadAnswer(str, Enum):
    FAIL = "fail"
    COUNT = "count"  # not "count": str.count


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


def _baseline(system: System, corpus: dict[str, str], *, model: str | None, tokenizer: str, depth: int,
              progress: bool, remote: dict[str, Any] | None = None) -> Any:
    from rankscope.retrieval.bm25 import BM25Retriever

    if system is System.openai:
        from rankscope.retrieval.dense import DenseRetriever
        from rankscope.retrieval.openai_embeddings import OpenAIEmbeddings

        assert remote is not None and model is not None
        return DenseRetriever(corpus, OpenAIEmbeddings(remote.pop("base_url"), model, **remote), name="openai",
                              with_text=False)

    def bm25() -> Any:
        return BM25Retriever(corpus, tokenizer=tokenizer, with_text=False)

    def dense() -> Any:
        from rankscope.retrieval.dense import DenseRetriever

        return DenseRetriever(corpus, model or DEFAULT_DENSE_MODEL, with_text=False)

    if system is System.bm25:
        return bm25()
    if system is System.dense:
        return dense()
    from rankscope.retrieval.hybrid import HybridRetriever

    return HybridRetriever({"bm25": bm25(), "dense": dense()}, method="rrf", depth=depth, name="hybrid")


@app.command("run")
@user_errors
def run_command(
    system: Annotated[Optional[System], typer.Argument(help="baseline: bm25, dense, hybrid or openai")] = None,
    testset: Annotated[Path, typer.Option("--testset", "-t", show_default="none: required",
                                          help="test set: .json, .jsonl (rankscope, LlamaIndex, RAGAS) or a BEIR "
                                               "folder")] = Path(),
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
        typer.Option("-m", "--metric",
                     show_default="ndcg@10 map mrr recall@100 P@10 hit_rate@10; cutoffs above -k lowered to k",
                     help="metric, repeatable"),
    ] = None,
    model: Annotated[
        Optional[str], typer.Option("--model", show_default="multilingual-e5-small; openai: none, required",
                                    help="dense model: multilingual-e5-small (any language), all-MiniLM-L6-v2 "
                                         "(English), or a sentence-transformers name or path; openai: the "
                                         "endpoint's embedding model")
    ] = None,
    base_url: Annotated[
        Optional[str], typer.Option("--base-url", show_default="none: required by openai",
                                    help="OpenAI-compatible endpoint, e.g. https://api.openai.com/v1")
    ] = None,
    api_key_env: Annotated[
        Optional[str], typer.Option("--api-key-env", show_default="none: send no key",
                                    help="environment variable holding the API key")
    ] = None,
    dimensions: Annotated[
        Optional[int], typer.Option("--dimensions", show_default="the model's",
                                    help="openai: ask for vectors of this size (text-embedding-3-*)")
    ] = None,
    query_prefix: Annotated[str, typer.Option("--query-prefix", help="openai: text put before each query, e.g. "
                                                                     "'query: ' for E5 models")] = "",
    doc_prefix: Annotated[str, typer.Option("--doc-prefix", help="openai: text put before each document, e.g. "
                                                                 "'passage: ' for E5 models")] = "",
    embeddings_cache: Annotated[
        Optional[Path], typer.Option("--embeddings-cache", show_default="openai-embeddings.sqlite in the cache folder",
                                     help="openai: SQLite cache of the vectors (re-runs ask only for new texts)")
    ] = None,
    no_embeddings_cache: Annotated[
        bool, typer.Option("--no-embeddings-cache", help="openai: do not read or write the vectors' cache")
    ] = False,
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
    cache_key: Annotated[
        Optional[str], typer.Option("--cache-key", show_default="none",
                                    help="your name for what the retriever answers from (an index version): a "
                                         "cache written under another key is refused")
    ] = None,
    cache_check: Annotated[
        int, typer.Option("--cache-check", help="cached queries asked again before the cache is used (0: trust it)")
    ] = 3,
    on_bad_answer: Annotated[
        BadAnswer, typer.Option("--on-bad-answer",
                                help="a retriever returning None or no ranking: fail (stop) or count (a failed "
                                     "query, retried first)")
    ] = BadAnswer.FAIL,
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
    """Run a baseline (bm25, dense, hybrid, openai) or --retriever module:object over a test set; write the TREC
    run.

    Examples:

      rankscope run bm25 --testset testset.jsonl --out bm25.trec

      rankscope run openai --base-url http://localhost:8000/v1 --model bge-m3 -t testset.jsonl -o openai.trec

      rankscope run --retriever myapp.search:Retriever --testset testset.jsonl --out mine.trec -k 20 --cache mine.cache
    """
    import warnings

    from rankscope.data.testset import TestSet
    from rankscope.errors import InvalidParameterError
    from rankscope.io import write_trec_run
    from rankscope.io.testset import read_corpus
    from rankscope.retrieval.runner import evaluate_retriever

    if testset == Path():
        raise InvalidParameterError(_("--testset is required (a .json, .jsonl test set or a BEIR folder)"))
    if out == Path():
        raise InvalidParameterError(_("--out is required (the TREC run file to write)"))
    if (system is None) == (retriever is None):
        raise InvalidParameterError(_("give a baseline (bm25, dense, hybrid, openai) or --retriever module:object, "
                                      "one of them"))
    remote: dict[str, Any] | None = None
    if system is System.openai:
        if base_url is None or model is None:
            raise InvalidParameterError(_("openai embeds through an OpenAI-compatible endpoint: give --base-url "
                                          "and --model (the endpoint's embedding model)"))
        remote = {"base_url": base_url, "api_key_env": api_key_env, "dimensions": dimensions,
                  "query_prefix": query_prefix, "doc_prefix": doc_prefix,
                  "cache": False if no_embeddings_cache else (embeddings_cache or True)}
    show = sys.stderr.isatty() if progress is None else progress
    with warnings.catch_warnings():  # every warning is in the summary printed below
        warnings.simplefilter("ignore")
        ts = TestSet.from_file(testset, split=split, strict=strict,
                               corpus=read_corpus(corpus) if corpus is not None else None)
        if retriever is not None:
            r = load_object(retriever)
        else:
            assert system is not None
            if ts.corpus is None:
                raise InvalidParameterError(_("{system} needs the documents: pass --corpus FILE, or a test set "
                                              'with a corpus (JSON with "corpus", or a BEIR folder)',
                                              system=system.value))
            r = _baseline(system, ts.corpus, model=model, tokenizer=tokenizer, depth=max(k, 100), progress=show,
                          remote=remote)
        run_name = name or (system.value if system is not None else None)
        ev = evaluate_retriever(r, ts, metric or default_metrics(k), k=k, workers=workers, retries=retries,
                                cache=cache, overwrite_cache=overwrite_cache, cache_key=cache_key,
                                cache_check=cache_check, progress=show, chunk_to_doc=chunk_to_doc, name=run_name,
                                relevance=relevance.value, relevance_level=relevance_level,
                                on_bad_answer=on_bad_answer.value)
    assert ev.doc_run is not None
    write_trec_run(ev.doc_run, out, tag=ev.run.name)
    if qrels_out is not None:
        from rankscope.io.trec import write_trec_qrels

        write_trec_qrels(ts.qrels, qrels_out)
    if json_out is not None:
        json_out.write_text(json.dumps(ev.to_dict(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    from rankscope.cli.messages import print_lines

    lg = lang.value if lang is not None else "en"
    read_as = []
    if ts.format not in (None, "json", "jsonl", "beir"):  # a format of another tool: say which one was read
        from rankscope.io.testset import format_name

        read_as = [f"{testset}: {_('read as {format}', format=format_name(ts.format, lg)).text(lg)}"]
    written = ngettext("run written to {out} ({n} row)", "run written to {out} ({n} rows)", len(ev.doc_run),
                       out=out).text(lg)
    if qrels_out is not None:
        written += _("; judgments to {out}", out=qrels_out).text(lg)
    print_lines([*read_as, *ev.summary(lg).splitlines(), written], lg)
