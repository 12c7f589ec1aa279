"""``rankscope judge``: grade a pool with an LLM behind any OpenAI-compatible endpoint; write TREC qrels."""

from __future__ import annotations

import json
import re
from enum import Enum
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
from rankscope.i18n import N_, _, gettext, ngettext


class JudgePrompt(str, Enum):
    graded = "graded"
    umbrela = "umbrela"


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
    prompt: Annotated[JudgePrompt, typer.Option(
        "--prompt", help="graded: rankscope's own prompt after UMBRELA; umbrela: the published UMBRELA prompt, "
                         "exactly")] = JudgePrompt.graded,
    max_failures: Annotated[str, typer.Option(
        "--max-failures", help="exit 1 when more pairs than this fail: a count (5) or a share (10%, 0.1)")] = "10%",
    max_cost: Annotated[Optional[float], typer.Option(
        "--max-cost", show_default="no limit",
        help="stop sending once the reported tokens cost this much (needs --price-in and --price-out); exit 1")] = None,
    until_width: Annotated[
        Optional[float],
        typer.Option("--until-width", metavar="W", show_default="none: judge every pair",
                     help="judge the pairs in a random order and stop once the anytime-valid interval (95%) of the "
                          "pool's share of relevant pairs (grade >= --relevance-level) is at most W wide; it then "
                          "covers the share over all pairs"),
    ] = None,
    relevance_level: Annotated[
        int, typer.Option("--relevance-level", metavar="GRADE", help="the grade counted as relevant by --until-width")
    ] = 1,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="random order of --until-width")] = 0,
) -> None:
    """Grade every (query, document) of POOL 0-3 with MODEL (temperature 0).

    The qrels file holds the grades; its sidecar OUT.provenance.jsonl holds each label's receipt (model,
    prompt and its hash, raw reply, time, tokens, cache hit or not) and every failure (never guessed).
    Answers are cached: run again to resume.  More failures than --max-failures exit 1.

    Examples:

      rankscope judge --pool pool.jsonl --queries testset.jsonl --base-url $URL --model gpt-4o-mini --out labels.qrels

      rankscope judge --pool pool.jsonl --queries testset.jsonl --base-url $URL --model gpt-4o-mini --dry-run
    """
    assert lang is not None  # settled by user_errors
    from rankscope.cli.messages import print_lines
    from rankscope.labels.batch import judge_pairs, plan_judging
    from rankscope.labels.judge import JudgeSettings
    from rankscope.labels.pool import read_pool
    from rankscope.labels.texts import read_texts
    from rankscope.llm_client import Endpoint

    if out is None and not dry_run:
        fail(_("give --out FILE (or --dry-run)"))
    limit = failure_limit(max_failures)
    if max_cost is not None and (price_in is None or price_out is None):
        fail(_("--max-cost needs --price-in and --price-out"))
    settings = JudgeSettings(
        Endpoint(base_url, api_key_env=api_key_env, timeout=timeout, retries=retries, max_wait=max_wait),
        model, lang=prompt_lang(ctx, lang), prompt_name=prompt.value, parse_retries=parse_retries,
        max_doc_chars=max_doc_chars, max_tokens=max_tokens)
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
                       truncated=plan.truncated, chars=max_doc_chars).text(said), prompt_note(settings, said),
                     _("estimated tokens: ~{tokens_in} in, ~{tokens_out} out; {price}; nothing was sent",
                       tokens_in=plan.tokens_in, tokens_out=plan.tokens_out,
                       price=price_line(plan.cost(price_in, price_out), said)).text(said),
                     tokenizer_line(plan.tokenizer, model, said),
                     _("not in the estimate: re-asks after unreadable replies (at most {tokens} more input tokens "
                       "if every reply needed all {retries} re-asks) and HTTP retries of failed calls",
                       tokens=plan.retry_in_max, retries=parse_retries).text(said),
                     *([_("the cached answers of this prompt used {ratio:.2f} input tokens (as the endpoint "
                          "reported them, retries included) per token counted here",
                          ratio=plan.observed_ratio).text(said)] if plan.observed_ratio else [])],
                    said)
        return
    assert out is not None
    prices = (price_in, price_out) if price_in is not None and price_out is not None else None
    stopped = None
    if until_width is not None:  # rounds in a random order until the interval is narrow enough
        from rankscope.labels.batch import judge_until

        report, stopped = judge_until(pairs, qtexts, dtexts, settings, width=until_width,
                                      relevance_level=relevance_level, seed=seed, cache=db, concurrency=concurrency,
                                      progress=progress, max_cost=max_cost, prices=prices)
    else:
        report = judge_pairs(pairs, qtexts, dtexts, settings, cache=db, concurrency=concurrency, progress=progress,
                             max_cost=max_cost, prices=prices)
    side = report.labels.write(out)
    allowed = limit[0] if limit[0] is not None else int(limit[1] * report.plan.items)
    over = report.failed > allowed
    if fmt is Output.json:
        typer.echo(json.dumps({"model": model, "prompt": settings.prompt.id, "out": str(out), "provenance": str(side),
                               "cache": str(db) if db else None, **report.to_dict(),
                               "cost": report.cost(price_in, price_out), "max_cost": max_cost,
                               "max_failures": max_failures, "failures_allowed": allowed,
                               "too_many_failures": over,
                               "stopped": None if stopped is None else stopped.to_dict()}, indent=2))
    else:
        print_lines([*_summary(report, settings, out, side, db, said), prompt_note(settings, said)]
                    + ([] if stopped is None else [stopped.text(said)]), said)
    if report.failed:
        text = _("{failed} of {pairs} pairs have no grade ({kinds}); they are listed in {side}", failed=report.failed,
                 pairs=report.plan.items, kinds=_kinds(report.errors).text(said), side=side).text(said)
        print_lines([_("rankscope: warning: {text}", text=text).text(said)], said, err=True)
    stop = []
    if over:
        stop.append(_("{failed} of {pairs} pairs have no grade, more than --max-failures {given} allows "
                      "({allowed}): the labels are written, but look at the failures before using them",
                      failed=report.failed, pairs=report.plan.items, allowed=allowed, given=max_failures).text(said))
    if report.not_sent:
        stop.append(_("the calls cost {cost:.4g}, reaching --max-cost {limit:g}: {n} pairs were not sent (the "
                      "answers so far are cached; run again with a higher limit to judge the rest)", n=report.not_sent,
                      cost=report.cost(price_in, price_out), limit=max_cost).text(said))
    if stop:
        print_lines([_("rankscope: error: {message}", message=t).text(said) for t in stop], said, err=True)
        raise typer.Exit(1)


def failure_limit(text: str) -> tuple[int | None, float]:
    """``--max-failures`` read: ``(count, 0)`` for a count such as ``5``, ``(None, share)`` for ``10%`` or ``0.1``.

    >>> failure_limit("5"), failure_limit("10%"), failure_limit("0.25")
    ((5, 0.0), (None, 0.1), (None, 0.25))
    """
    t = text.strip()
    if re.fullmatch(r"\d+", t):
        return int(t), 0.0
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*%", t)
    share = float(m.group(1)) / 100 if m else float(t) if re.fullmatch(r"0?\.\d+|1(?:\.0*)?", t) else None
    if share is None or not 0 <= share <= 1:
        fail(_("--max-failures must be a count (5) or a share (10%, 0.1), got {value!r}", value=text))
    assert share is not None
    return None, share


def tokenizer_line(tokenizer: str, model: str, lang: str) -> str:
    """Which tokenizer counted the dry run's tokens (or that they are a character estimate)."""
    if tokenizer == "estimate":
        return _("tokens estimated from characters (no tokenizer of {model} is installed for offline use): one per "
                 "CJK character and one per 4.5 others, often {error} off", model=model,
                 error=gettext("10-20%", lang)).text(lang)
    return _("tokens counted with {tokenizer}, the tokenizer of {model}", tokenizer=tokenizer, model=model).text(lang)


def prompt_note(settings: Any, lang: str) -> str:
    """What the prompt is: rankscope's own, or UMBRELA's published one reproduced exactly (and what differs)."""
    p = settings.prompt
    if p.name != "umbrela":
        return _("prompt {prompt}: rankscope's own wording after UMBRELA, not UMBRELA's prompt, so UMBRELA's "
                 "published agreement with TREC assessors is not a figure of this prompt (--prompt umbrela sends "
                 "UMBRELA's)", prompt=p.id).text(lang)
    given = settings.max_tokens
    if given is not None and given != p.params.get("max_tokens"):
        return _("prompt {prompt}: the published UMBRELA prompt (castorini/umbrela, qrel_zeroshot_bing), but with "
                 "max_tokens {max_tokens} where UMBRELA sends {published}: not an exact reproduction", prompt=p.id,
                 max_tokens=given, published=p.params.get("max_tokens")).text(lang)
    return _("prompt {prompt}: the published UMBRELA prompt and request (castorini/umbrela, qrel_zeroshot_bing), "
             "reproduced exactly; asking again after an unreadable reply is rankscope's addition (--parse-retries "
             "0 for none)", prompt=p.id).text(lang)


#: the kinds of failure a judgment records (the part of its error before the first colon) that are said in words
KINDS = {"missing text": N_("missing text"), "unreadable reply": N_("unreadable reply"), "timeout": N_("timeout"),
         "connection": N_("connection"), "rate_limited": N_("rate_limited"), "bad_response": N_("bad_response"),
         "max cost": N_("not sent (max cost)")}


def _kinds(errors: dict[str, int]) -> Items:
    """How many judgments failed in each way, most first: ``1 missing text, 1 unreadable reply``."""
    return Items(tuple(
        _("{n} {kind}", n=n,
          kind=_(KINDS[k]) if k in KINDS else k)
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
