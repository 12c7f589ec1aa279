"""``rankscope judge``: grade a pool with an LLM behind any OpenAI-compatible endpoint; write TREC qrels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from rankscope.cli.app import app, fail, user_errors
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
from rankscope.errors import Items
from rankscope.i18n import N_, _, ngettext


@app.command("judge")
@user_errors
def judge_command(
    ctx: typer.Context,
    pool: Annotated[Path, typer.Option("--pool", help="pool file (rankscope pool --out), JSON Lines")],
    queries: Annotated[
        Path, typer.Option("--queries", help="query texts: BEIR queries.jsonl or folder, a test set, or id<TAB>text")
    ],
    base_url: BaseUrl,
    model: Model,
    out: Annotated[Optional[Path], typer.Option("--out", show_default="none: print the grades' summary only",
                                                help="write the labels here (TREC qrels + sidecar)")] = None,
    corpus: Annotated[
        Optional[Path], typer.Option("--corpus", show_default="--queries",
                                     help="document texts: BEIR corpus.jsonl or folder, a test set "
                                                      "with a corpus, or id<TAB>text")
    ] = None,
    api_key_env: ApiKeyEnv = None,
    lang: LangOpt = None,
    concurrency: Concurrency = 4,
    timeout: Timeout = 60.0,
    retries: Retries = 4,
    max_wait: MaxWait = 300.0,
    parse_retries: Annotated[int, typer.Option("--parse-retries", help="re-asks after an unreadable reply")] = 2,
    max_doc_chars: MaxDocChars = 8000,
    max_tokens: MaxTokens = None,
    cache: CacheFile = DEFAULT_CACHE,
    no_cache: NoCache = False,
    dry_run: DryRun = False,
    price_in: PriceIn = None,
    price_out: PriceOut = None,
    progress: Progress = None,
    fmt: Format = Output.table,
    until_width: Annotated[
        Optional[float],
        typer.Option("--until-width", metavar="W", show_default="none: judge every pair",
                     help="judge the pairs in a random order and stop once the anytime-valid 95% interval of the "
                          "pool's share of relevant pairs (grade >= --relevance-level) is at most W wide; it then "
                          "covers the share over all pairs"),
    ] = None,
    relevance_level: Annotated[
        int, typer.Option("--relevance-level", metavar="GRADE", help="the grade counted as relevant by --until-width")
    ] = 1,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="random order of --until-width")] = 0,
) -> None:
    """Grade every (query, document) of POOL 0-3 with MODEL (UMBRELA-style prompt, temperature 0).

    The qrels file holds the grades; its sidecar OUT.provenance.jsonl holds model, prompt version
    and every failure (never guessed).  Answers are cached: run again to resume.

    Examples:

      rankscope judge --pool pool.jsonl --queries testset.jsonl --base-url $URL --model gpt-4o-mini --out labels.qrels

      rankscope judge --pool pool.jsonl --queries testset.jsonl --base-url $URL --model gpt-4o-mini --dry-run
    """
    assert lang is not None  # settled by user_errors
    from rankscope.cli.messages import print_lines
    from rankscope.labels.batch import judge_pairs, plan_judging
    from rankscope.labels.client import Endpoint
    from rankscope.labels.judge import JudgeSettings
    from rankscope.labels.pool import read_pool
    from rankscope.labels.texts import read_texts

    if out is None and not dry_run:
        fail(_("give --out FILE (or --dry-run)"))
    settings = JudgeSettings(
        Endpoint(base_url, api_key_env=api_key_env, timeout=timeout, retries=retries, max_wait=max_wait),
        model, lang=prompt_lang(ctx, lang), parse_retries=parse_retries, max_doc_chars=max_doc_chars,
        max_tokens=max_tokens)
    said = lang.value
    pairs = read_pool(pool)
    qtexts = read_texts(queries, "queries")
    dtexts = read_texts(corpus or queries, "corpus")
    db = None if no_cache else cache
    if dry_run:
        plan = plan_judging(pairs, qtexts, dtexts, settings, cache=db)
        if fmt is Output.json:
            typer.echo(json.dumps({"dry_run": True, "model": model, "prompt": settings.prompt.id,
                                   **plan.to_dict(price_in, price_out)}, indent=2))
            return
        print_lines([_("dry run ({model}, prompt {prompt}): {pairs} pairs, {distinct} distinct texts, {cached} in "
                       "the cache, {calls} calls to make; {missing} pairs without text, {truncated} documents cut "
                       "at {chars} characters", model=model, prompt=settings.prompt.id, pairs=plan.items,
                       distinct=plan.distinct, cached=plan.cached, calls=plan.calls, missing=len(plan.missing),
                       truncated=plan.truncated, chars=max_doc_chars).text(said),
                     _("estimated tokens: ~{tokens_in} in, ~{tokens_out} out; {price}; nothing was sent",
                       tokens_in=plan.tokens_in, tokens_out=plan.tokens_out,
                       price=price_line(plan.cost(price_in, price_out), said)).text(said)], said)
        return
    assert out is not None
    stopped = None
    if until_width is not None:  # rounds in a random order until the interval is narrow enough
        from rankscope.labels.batch import judge_until

        report, stopped = judge_until(pairs, qtexts, dtexts, settings, width=until_width,
                                      relevance_level=relevance_level, seed=seed, cache=db, concurrency=concurrency,
                                      progress=progress)
    else:
        report = judge_pairs(pairs, qtexts, dtexts, settings, cache=db, concurrency=concurrency, progress=progress)
    side = report.labels.write(out)
    if fmt is Output.json:
        typer.echo(json.dumps({"model": model, "prompt": settings.prompt.id, "out": str(out), "provenance": str(side),
                               "cache": str(db) if db else None, **report.to_dict(),
                               "stopped": None if stopped is None else stopped.to_dict()}, indent=2))
    else:
        print_lines(_summary(report, settings, out, side, db, said)
                    + ([] if stopped is None else [stopped.text(said)]), said)
    if report.failed:
        text = _("{failed} of {pairs} pairs have no grade ({kinds}); they are listed in {side}", failed=report.failed,
                 pairs=report.plan.items, kinds=_kinds(report.errors).text(said), side=side).text(said)
        print_lines([_("rankscope: warning: {text}", text=text).text(said)], said, err=True)


#: the kinds of failure a judgment records (the part of its error before the first colon) that are said in words
KINDS = {"missing text": N_("missing text"), "unreadable reply": N_("unreadable reply"), "timeout": N_("timeout"),
         "connection": N_("connection"), "rate_limited": N_("rate_limited"), "bad_response": N_("bad_response")}


def _kinds(errors: dict[str, int]) -> Items:
    """How many judgments failed in each way, most first: ``1 missing text, 1 unreadable reply``."""
    return Items(tuple(
        _("{n} {kind}", n=n,
          kind=_(KINDS[k])
                                                  if k in KINDS else k)
        for k, n in sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))))


def _summary(report: Any, settings: Any, out: Path, side: Path, db: Path | None, lang: str) -> list[str]:
    """The lines that say what a judging run did, in ``lang``."""
    c = report.labels.counts()
    hist: dict[int, int] = {}
    for g in report.labels.qrels.grades.tolist():
        hist[g] = hist.get(g, 0) + 1
    grades = Items(tuple(_("{grade}: {n}", grade=g, n=n) for g, n in sorted(hist.items())))
    lines = [_("judged {pairs} pairs with {model} (prompt {prompt}): {graded} graded, {failed} failed; "
               "{from_cache} from the cache, {judged_now} judged now", pairs=report.plan.items, model=settings.model,
               prompt=settings.prompt.id, graded=c["model"], failed=report.failed, from_cache=report.from_cache,
               judged_now=report.judged_now).text(lang),
             _("grades: {grades}", grades=grades.text(lang)).text(lang)]
    if report.plan.truncated:
        lines.append(ngettext("{n} document was cut at {chars} characters",
                              "{n} documents were cut at {chars} characters",
                              report.plan.truncated, chars=settings.max_doc_chars).text(lang))
    lines.append(_("{calls} HTTP calls, {tokens_in} input and {tokens_out} output tokens (as the endpoint reported "
                   "them)", calls=report.http_calls, tokens_in=report.tokens_in,
                   tokens_out=report.tokens_out).text(lang))
    lines.append(_("qrels -> {out}; provenance -> {side}; cache: {cache}", out=out, side=side,
                   cache=db).text(lang) if db
                 else _("qrels -> {out}; provenance -> {side}", out=out, side=side).text(lang))
    return lines
