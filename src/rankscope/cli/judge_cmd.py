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
    Lang,
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
)


@app.command("judge")
@user_errors
def judge_command(
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
    lang: LangOpt = Lang.en,
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
) -> None:
    """Grade every (query, document) of POOL 0-3 with MODEL (UMBRELA-style prompt, temperature 0).

    The qrels file holds the grades; its sidecar OUT.provenance.jsonl holds model, prompt version
    and every failure (never guessed).  Answers are cached: run again to resume.

    Examples:

      rankscope judge --pool pool.jsonl --queries testset.jsonl --base-url $URL --model gpt-4o-mini --out labels.qrels

      rankscope judge --pool pool.jsonl --queries testset.jsonl --base-url $URL --model gpt-4o-mini --dry-run
    """
    from rankscope.labels.batch import judge_pairs, plan_judging
    from rankscope.labels.client import Endpoint
    from rankscope.labels.judge import JudgeSettings
    from rankscope.labels.pool import read_pool
    from rankscope.labels.texts import read_texts

    if out is None and not dry_run:
        fail("give --out FILE (or --dry-run)")
    settings = JudgeSettings(
        Endpoint(base_url, api_key_env=api_key_env, timeout=timeout, retries=retries, max_wait=max_wait),
        model, lang=lang.value, parse_retries=parse_retries, max_doc_chars=max_doc_chars, max_tokens=max_tokens)
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
        typer.echo(f"dry run ({model}, prompt {settings.prompt.id}): {plan.items} pairs, {plan.distinct} distinct "
                   f"texts, {plan.cached} in the cache, {plan.calls} calls to make; {len(plan.missing)} pairs "
                   f"without text, {plan.truncated} documents cut at {max_doc_chars} characters")
        typer.echo(f"estimated tokens: ~{plan.tokens_in} in, ~{plan.tokens_out} out; "
                   f"{price_line(plan.cost(price_in, price_out))}; nothing was sent")
        return
    assert out is not None
    report = judge_pairs(pairs, qtexts, dtexts, settings, cache=db, concurrency=concurrency, progress=progress)
    side = report.labels.write(out)
    if fmt is Output.json:
        typer.echo(json.dumps({"model": model, "prompt": settings.prompt.id, "out": str(out), "provenance": str(side),
                               "cache": str(db) if db else None, **report.to_dict()}, indent=2))
    else:
        _print(report, settings, out, side, db)
    if report.failed:
        typer.echo(f"rankscope: warning: {report.failed} of {report.plan.items} pairs have no grade "
                   f"({_kinds(report.errors)}); they are listed in {side}", err=True)


def _kinds(errors: dict[str, int]) -> str:
    return ", ".join(f"{n} {k}" for k, n in sorted(errors.items(), key=lambda kv: (-kv[1], kv[0])))


def _print(report: Any, settings: Any, out: Path, side: Path, db: Path | None) -> None:
    c = report.labels.counts()
    hist: dict[int, int] = {}
    for g in report.labels.qrels.grades.tolist():
        hist[g] = hist.get(g, 0) + 1
    typer.echo(f"judged {report.plan.items} pairs with {settings.model} (prompt {settings.prompt.id}): "
               f"{c['model']} graded, {report.failed} failed; {report.from_cache} from the cache, "
               f"{report.judged_now} judged now")
    typer.echo("grades: " + ", ".join(f"{g}: {n}" for g, n in sorted(hist.items())))
    if report.plan.truncated:
        typer.echo(f"{report.plan.truncated} documents were cut at {settings.max_doc_chars} characters")
    typer.echo(f"{report.http_calls} HTTP calls, {report.tokens_in} input and {report.tokens_out} output tokens "
               "(as the endpoint reported them)")
    typer.echo(f"qrels -> {out}; provenance -> {side}" + (f"; cache: {db}" if db else ""))
