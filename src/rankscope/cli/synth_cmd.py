"""``rankscope synth``: synthetic questions that keep the id of the chunk they came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from rankscope.cli.app import app, user_errors
from rankscope.cli.llm_options import (
    DEFAULT_CACHE,
    ApiKeyEnv,
    BaseUrl,
    CacheFile,
    Concurrency,
    DryRun,
    Format,
    LangOpt,
    MaxDocChars,
    MaxTokens,
    MaxWait,
    Model,
    NoCache,
    Output,
    PriceIn,
    PriceOut,
    Progress,
    Retries,
    Timeout,
    price_line,
    prompt_lang,
)
from rankscope.i18n import _


@app.command("synth")
@user_errors
def synth_command(
    ctx: typer.Context,
    corpus: Annotated[Path, typer.Option("--corpus", help="chunks: BEIR corpus.jsonl or folder, a test set with a "
                                                          "corpus, or id<TAB>text")],
    base_url: BaseUrl,
    model: Model,
    out: Annotated[Optional[Path], typer.Option("--out", show_default="none: a dry summary only",
                                                help="test set to write (.json or .jsonl)")] = None,
    n: Annotated[int, typer.Option("--n", help="number of questions")] = 200,
    lang: LangOpt = None,
    api_key_env: ApiKeyEnv = None,
    judge_model: Annotated[Optional[str], typer.Option("--judge-model", show_default="--model",
                                                       help="model of the judge")] = None,
    judge_base_url: Annotated[
        Optional[str], typer.Option("--judge-base-url", show_default="--base-url",
                                    help="endpoint of the judge")] = None,
    judge_api_key_env: Annotated[
        Optional[str], typer.Option("--judge-api-key-env", show_default="--api-key-env",
                                    help="API key variable of the judge")
    ] = None,
    min_grade: Annotated[int, typer.Option("--min-grade", help="lowest judge grade kept (0-3)")] = 2,
    chunk_to_doc: Annotated[
        Optional[str], typer.Option("--chunk-to-doc", show_default="none: every chunk is its own document",
                                    help="chunk id pattern, e.g. '{doc_id}#{chunk}', to stratify "
                                                           "by document")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="sampling seed")] = 0,
    near: Annotated[float, typer.Option("--near", help="trigram Jaccard of near-duplicate questions")] = 0.8,
    max_copy: Annotated[float, typer.Option("--max-copy", help="share of a question copied from its chunk")] = 0.85,
    min_copy_run: Annotated[int, typer.Option("--min-copy-run", help="tokens in a row that count as copying")] = 5,
    min_chars: Annotated[int, typer.Option("--min-chars", help="skip shorter chunks")] = 40,
    max_candidates: Annotated[
        Optional[int], typer.Option("--max-candidates", show_default="3 x N", help="chunks tried at most")] = None,
    with_corpus: Annotated[bool, typer.Option("--with-corpus", help="write the corpus into the test set")] = False,
    concurrency: Concurrency = 4,
    timeout: Timeout = 60.0,
    retries: Retries = 4,
    max_wait: MaxWait = 300.0,
    max_doc_chars: MaxDocChars = 8000,
    max_tokens: MaxTokens = None,
    cache: CacheFile = DEFAULT_CACHE,
    no_cache: NoCache = False,
    dry_run: DryRun = False,
    price_in: PriceIn = None,
    price_out: PriceOut = None,
    progress: Progress = None,
    fmt: Format = Output.table,
) -> None:
    """Generate a test set of N questions from sampled chunks, each with its chunk as the relevant id.

    Chunks are sampled stratified across documents; each question keeps its chunk id as the relevant id and a short
    answer.  Questions that copy their chunk, near-duplicates and questions the judge finds unanswerable from their
    chunk, and questions that point at their chunk ("according to the passage") are dropped (listed in
    OUT.synth.json).  Audit with `testset check`.

    Examples:

      rankscope synth --corpus corpus.jsonl --base-url $URL --model gpt-4o-mini --n 200 --out synth.jsonl

      rankscope synth --corpus corpus.jsonl --base-url $URL --model qwen2.5-7b-instruct --lang zh --dry-run
    """
    assert lang is not None  # settled by user_errors
    from rankscope.cli.app import fail
    from rankscope.cli.judge_cmd import tokenizer_line
    from rankscope.cli.messages import print_lines
    from rankscope.labels.judge import JudgeSettings
    from rankscope.labels.synth import plan_synth, synthesize
    from rankscope.labels.texts import read_texts
    from rankscope.llm_client import Endpoint

    if out is None and not dry_run:
        fail(_("give --out FILE (or --dry-run)"))
    said, prompt = lang.value, prompt_lang(ctx, lang)
    gen = JudgeSettings(Endpoint(base_url, api_key_env=api_key_env, timeout=timeout, retries=retries,
                                 max_wait=max_wait), model, lang=prompt, prompt_name="synth",
                        max_doc_chars=max_doc_chars, max_tokens=max_tokens)
    judge = None
    if judge_model or judge_base_url or judge_api_key_env:
        judge = JudgeSettings(Endpoint(judge_base_url or base_url, api_key_env=judge_api_key_env or api_key_env,
                                       timeout=timeout, retries=retries, max_wait=max_wait),
                              judge_model or model, lang=prompt, max_doc_chars=max_doc_chars,
                              max_tokens=max_tokens)
    texts = read_texts(corpus, "corpus")
    if dry_run:
        plan = plan_synth(texts, n, gen, chunk_to_doc=chunk_to_doc, seed=seed, min_chars=min_chars)
        cost = (None if price_in is None or price_out is None
                else (plan["tokens_in"] * price_in + plan["tokens_out"] * price_out) / 1e6)
        if fmt is Output.json:
            typer.echo(json.dumps({"dry_run": True, **plan, "estimated_cost": cost}, indent=2))
            return
        print_lines([_("dry run: {chunks} chunks of at least {min_chars} characters; about {calls} calls for {n} "
                       "questions (generation + judge, {candidates} candidates; more if many are rejected; cached "
                       "answers are free)", chunks=plan["chunks_available"], min_chars=min_chars, calls=plan["calls"],
                       n=n, candidates=plan["candidates"]).text(said),
                     _("estimated tokens: ~{tokens_in} in, ~{tokens_out} out; {price}; nothing was sent",
                       tokens_in=plan["tokens_in"], tokens_out=plan["tokens_out"],
                       price=price_line(cost, said)).text(said), tokenizer_line(plan["tokenizer"], model, said)], said)
        return
    assert out is not None
    result = synthesize(texts, n, gen, judge=judge, chunk_to_doc=chunk_to_doc, seed=seed, min_chars=min_chars,
                        min_grade=min_grade, max_copy=max_copy, min_copy_run=min_copy_run, near=near,
                        max_candidates=max_candidates, cache=None if no_cache else cache, concurrency=concurrency,
                        progress=progress, name=out.stem)
    ts = result.testset
    if out.suffix.lower() in (".jsonl", ".ndjson"):
        ts.to_jsonl(out)
    else:
        ts.to_json(out, include_corpus=with_corpus)
    report = out.with_name(out.name + ".synth.json")
    result.write_report(report)
    c = result.counts
    if fmt is Output.json:
        typer.echo(json.dumps({"out": str(out), "report": str(report), **result.to_dict()["settings"],
                               "counts": c}, ensure_ascii=False, indent=2))
    else:
        print_lines([_("{accepted} of {n} questions from {candidates} candidate chunks -> {out}",
                       accepted=c["accepted"], n=n, candidates=c["candidates"], out=out).text(said),
                     _("rejected: {pointing} not standalone (pointing at their chunk), {copies} copying their "
                       "chunk, {near} near-duplicates, {unanswerable} unanswerable per the judge, {judge_failed} "
                       "judge failures, {generation_failed} generation failures, {surplus} good but not needed; "
                       "{short} chunks shorter than {min_chars} characters skipped; details in {report}",
                       pointing=c["not_standalone"], copies=c["verbatim_copy"], near=c["near_duplicate"],
                       unanswerable=c["unanswerable"], judge_failed=c["judge_failed"],
                       generation_failed=c["generation_failed"], surplus=c["surplus"], short=c["short_chunks_skipped"],
                       min_chars=min_chars, report=report).text(said)], said)
    if c["accepted"] < n:
        text = _("only {accepted} of {n} questions were accepted (raise --max-candidates or check {report})",
                 accepted=c["accepted"], n=n, report=report).text(said)
        print_lines([_("rankscope: warning: {text}", text=text).text(said)], said, err=True)
