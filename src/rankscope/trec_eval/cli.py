"""``rankscope trec_eval``: a drop-in replacement for trec_eval 9.0.8's command line.

Same flags, same measure names and order, byte-identical output (see
docs/trec_eval.md).  A user error prints one line ``rankscope: error: ...`` on
stderr and returns 2.
"""

from __future__ import annotations

import sys

from rankscope.errors import RankscopeError, user_error_message
from rankscope.trec_eval.flags import USAGE, parse_args

__all__ = ["main", "run_trec_eval", "usage"]

VERSION = "9.0.8 (rankscope front end)"


def run_trec_eval(argv: list[str]) -> str:
    """Evaluate as ``trec_eval argv`` would and return its standard output."""
    opts = parse_args(argv)
    if opts.help:
        return usage() + "\n"
    if opts.version:
        return f"trec_eval version {VERSION}\n"
    from rankscope.io.trec import read_trec_qrels, read_trec_run
    from rankscope.trec_eval.compute import compute, resolve
    from rankscope.trec_eval.format import render

    columns = resolve(opts)  # validate measures before reading large files
    qrels = read_trec_qrels(opts.qrels)
    run = read_trec_run(opts.run)
    result = compute(opts, qrels, run, columns)
    return render(result, per_query=opts.query, summary=opts.summary, complete=opts.complete)


def usage(width: int | None = None) -> str:
    """The usage line wrapped to ``width`` (default: the terminal's), an option and its value never apart.

    >>> print(usage(60))
    Usage: rankscope trec_eval [-h] [-q] [-c] [-n] [-J]
        [-l <num>] [-M <num>] [-N <num>] {-m measure[.params]}*
        trec_rel_file trec_top_file
    """
    import re
    import shutil

    width = width or shutil.get_terminal_size().columns
    lines = [""]
    for word in re.findall(r"\[[^\]]*\]|\{[^}]*\}\*?|\S+", USAGE):
        if lines[-1].strip() and len(lines[-1]) + 1 + len(word) > width:
            lines.append("    ")
        lines[-1] += (" " if lines[-1].strip() else "") + word
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Console entry: print the evaluation, or a one-line error and return 2."""
    args = sys.argv[1:] if argv is None else argv
    try:
        out = run_trec_eval(args)
    except (RankscopeError, OSError) as exc:
        message = user_error_message(exc)
        if message is None:
            raise
        print(f"rankscope: error: {message}", file=sys.stderr)
        return 2
    sys.stdout.write(out)
    return 0
