"""Command-line parsing identical to trec_eval 9.0.8 (``getopt_long`` semantics).

Short options take attached or separate values (``-M100`` / ``-M 100``,
``-mP.5,10``), flags cluster (``-qc``), options may follow the file names, ``--``
ends the options, long options (``--measure=P.5``) may be abbreviated.  Unlike
trec_eval, numeric values must be integers (trec_eval's ``atol`` would read
``-M1k`` as 1) and options this front end cannot honour (``-R prefs``, ``-Z``,
``-D``) are refused with a clear error instead of being half-applied.

>>> o = parse_args(["-q", "-c", "-M1000", "-l", "2", "-mP.5,10", "-m", "all_trec", "qrels", "run"])
>>> o.query, o.complete, o.depth, o.relevance_level, o.measures, o.qrels, o.run
(True, True, 1000, 2, ['P.5,10', 'all_trec'], 'qrels', 'run')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rankscope.errors import RankscopeError

__all__ = ["TrecOptions", "parse_args", "TrecUsageError", "USAGE"]

USAGE = (
    "Usage: rankscope trec_eval [-h] [-q] [-c] [-n] [-J] [-l <num>] [-M <num>] [-N <num>] "
    "{-m measure[.params]}* trec_rel_file trec_top_file"
)

# short option -> takes a value
_SHORT = {"h": False, "v": False, "q": False, "m": True, "c": False, "l": True, "n": False, "D": True,
          "J": False, "N": True, "M": True, "R": True, "T": True, "o": False, "Z": True}
_LONG = {"help": "h", "version": "v", "query_eval_wanted": "q", "measure": "m", "complete_rel_info_wanted": "c",
         "level_for_rel": "l", "nosummary": "n", "Debug_level": "D", "Judged_docs_only": "J",
         "Number_docs_in_coll": "N", "Max_retrieved_per_topic": "M", "Rel_info_format": "R",
         "Results_format": "T", "Output_old_results_format": "o", "Zscore": "Z"}


class TrecUsageError(RankscopeError):
    """A malformed trec_eval command line."""


@dataclass
class TrecOptions:
    """What a trec_eval command line asks for."""

    qrels: str = ""
    run: str = ""
    query: bool = False
    complete: bool = False
    summary: bool = True
    judged_only: bool = False
    relevance_level: int = 1
    depth: int | None = None
    num_docs: int = 0
    measures: list[str] = field(default_factory=list)
    help: bool = False
    version: bool = False


def _integer(flag: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise TrecUsageError(f"-{flag} needs an integer, got {text!r}") from None


def _long_option(arg: str) -> tuple[str, str | None]:
    name, eq, value = arg[2:].partition("=")
    hits = [k for k in _LONG if k == name] or [k for k in _LONG if k.startswith(name)]
    if len(hits) != 1:
        what = "ambiguous" if hits else "unknown"
        raise TrecUsageError(f"{what} option '--{name}'")
    return _LONG[hits[0]], (value if eq else None)


def parse_args(argv: list[str]) -> TrecOptions:
    """Parse trec_eval's arguments (see the module doc)."""
    opts = TrecOptions()
    positional: list[str] = []
    i = 0
    pairs: list[tuple[str, str | None]] = []
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            positional.extend(argv[i:])
            break
        if arg.startswith("--"):
            flag, value = _long_option(arg)
            if _SHORT[flag] and value is None:
                if i >= len(argv):
                    raise TrecUsageError(f"option '--{arg[2:]}' requires an argument")
                value = argv[i]
                i += 1
            pairs.append((flag, value))
            continue
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        j = 1
        while j < len(arg):
            flag = arg[j]
            if flag not in _SHORT:
                raise TrecUsageError(f"invalid option -- '{flag}'")
            if _SHORT[flag]:
                value = arg[j + 1 :]
                if not value:
                    if i >= len(argv):
                        raise TrecUsageError(f"option requires an argument -- '{flag}'")
                    value = argv[i]
                    i += 1
                pairs.append((flag, value))
                break
            pairs.append((flag, None))
            j += 1
    for flag, value in pairs:
        _apply(opts, flag, value)
    if opts.help or opts.version:
        return opts
    if len(positional) != 2:
        raise TrecUsageError(f"expected a qrels file and a run file, got {len(positional)} file arguments; {USAGE}")
    opts.qrels, opts.run = positional
    return opts


def _apply(opts: TrecOptions, flag: str, value: str | None) -> None:
    v = value or ""
    if flag == "h":
        opts.help = True
    elif flag == "v":
        opts.version = True
    elif flag == "q":
        opts.query = True
    elif flag == "m":
        opts.measures.append(v)
    elif flag == "c":
        opts.complete = True
    elif flag == "l":
        opts.relevance_level = _integer("l", v)
    elif flag == "n":
        opts.summary = False
    elif flag == "J":
        opts.judged_only = True
    elif flag == "N":
        opts.num_docs = _integer("N", v)
    elif flag == "M":
        depth = _integer("M", v)
        if depth < 1:
            raise TrecUsageError(f"-M needs a positive number of documents, got {v!r}")
        opts.depth = depth
    elif flag == "R":
        if v != "qrels":
            raise TrecUsageError(f"-R {v}: only the 'qrels' relevance format is supported (not prefs / qrels_jg)")
    elif flag == "T":
        if v != "trec_results":
            raise TrecUsageError(f"-T {v}: only the 'trec_results' format is supported")
    elif flag == "Z":
        raise TrecUsageError("-Z (z-score output) is not supported")
    elif flag == "D":
        raise TrecUsageError("-D (debug output) is not supported")
    # -o: obsolete in trec_eval 9, accepted as a no-op
