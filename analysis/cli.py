"""The command line of the analysis, shared by `scrapy analyze` and `python -m analysis`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analysis.embed import BACKENDS, DEFAULT_BACKEND, DEFAULT_MODEL, choose_backend

DESCRIPTION = (
    "Analyse a crawl database: embed the pages, find related pairs that are not linked yet, rank them, "
    "propose an anchor from the source text, and write the review queue to the database and a CSV."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("db", metavar="DB", help="the SQLite database that `scrapy crawl site` wrote")
    parser.add_argument("--csv", metavar="PATH", type=Path,
                        help="where to write the review queue (default: <DB without .db>.suggestions.csv beside DB)")
    parser.add_argument("--model", default=DEFAULT_MODEL, metavar="NAME_OR_PATH",
                        help=f"sentence-transformers model name or local path (default: {DEFAULT_MODEL}, shipped offline)")
    parser.add_argument("--threshold", type=float, metavar="F",
                        help="lowest similarity worth suggesting, but for a mention or one of the source's 4 nearest pages by "
                             "words (default: the site's calibrated value, else the "
                             "model's: 0.35 for all-MiniLM-L6-v2, 0.55 for BAAI/bge-small-en-v1.5, 0.5 for others)")
    parser.add_argument("--max-similarity", type=float, default=0.9, metavar="F",
                        help="pairs above this are near-duplicates, reported as cannibalisation, as are pages with "
                             "the same main text (default: 0.9)")
    parser.add_argument("--max-per-page", type=int, default=4, metavar="N", help="suggestions per source page (default: 4)")
    parser.add_argument("--max-per-target", type=int, metavar="N",
                        help="suggestions per target across the queue, a hub guard (default: the largest cap that keeps "
                             "every target within 2%% of the queue, at least 3; none with --targets)")
    parser.add_argument("--min-words", type=int, default=50, metavar="N",
                        help="pages with less main text than this are neither source nor target (default: 50)")
    parser.add_argument("--exclude", action="append", metavar="PATTERN",
                        help="pages whose URL path (or whole URL) matches this shell-style pattern, such as '/tag/*', "
                             "are neither source nor target of a suggestion (they still count as links); repeatable (default: none)")
    parser.add_argument("--targets", action="append", metavar="PATTERN",
                        help="only pages whose URL path (or whole URL) matches this pattern, such as '/products/*', are "
                             "targets: the queue links to them alone; repeatable (default: every page)")
    parser.add_argument("--all-languages", action="store_true",
                        help="pair pages whatever language they declare, where the site's language tags are wrong (a "
                             "template that says en-GB on an en-US site) (default: a page is paired only with pages of its "
                             "own language and region, or of none declared; en goes with en-US and en-GB)")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                        help="where to run the model (default: auto, a GPU when the backend has one)")
    parser.add_argument("--backend", default="auto", choices=("auto", *BACKENDS),
                        help="how to run the model: torch (sentence-transformers), onnx (the same model exported once to "
                             "ONNX into ~/.cache/linkspider or $LINKSPIDER_CACHE, run with onnxruntime, no torch) or "
                             "onnx-int8 (that export quantised to int8: faster, slightly different vectors) "
                             f"(default: auto, torch on a GPU, else {DEFAULT_BACKEND})")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress on stderr (the progress bars of the embedding and the anchor search, each later stage as it starts)")
    parser.add_argument("--approved-only", action="store_true",
                        help="measure the impact of the approved suggestions only (default: pending and approved)")
    backtest = parser.add_argument_group("backtest: hide some editorial links, count how many come back")
    backtest.add_argument("--backtest", action="store_true",
                          help="hide a share of the site's editorial links, analyse, report how many come back "
                               "(engine beside two baselines); writes no suggestions")
    backtest.add_argument("--share", type=float, default=0.2, metavar="F", help="share of editorial links to hide (default: 0.2)")
    backtest.add_argument("--seed", type=int, default=1, metavar="N", help="random seed of the first round (default: 1)")
    backtest.add_argument("--rounds", type=int, default=1, metavar="N", help="rounds with seeds N, N+1, ... (default: 1)")
    backtest.add_argument("--calibrate", action="store_true",
                          help="with --backtest: store the best threshold for this site's later runs with this model")


def run(args: argparse.Namespace) -> int:
    """Run the analysis and print its summary; a bad input gets one line on stderr and exit status 1."""
    from analysis.backtest import BacktestError
    from analysis.embed import ModelError
    from analysis.load import EmptyCrawl
    from analysis.pipeline import Options, run as analyse
    from analysis.scope import ScopeError
    from analysis.summary import summary
    from linkspider.db import NotALinkspiderDatabase, Unwritable, explained

    for name in ("max_per_page", "max_per_target", "min_words"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            print(f"error: --{name.replace('_', '-')} must be at least 1", file=sys.stderr)
            return 2
    options = Options(model=args.model, threshold=args.threshold, max_similarity=args.max_similarity,
                      max_per_page=args.max_per_page, max_per_target=args.max_per_target, min_words=args.min_words,
                      device=args.device, backend=choose_backend(args.backend, args.device), csv=args.csv,
                      progress=not args.no_progress, approved_only=args.approved_only, exclude=tuple(args.exclude or ()),
                      targets=tuple(args.targets or ()), all_languages=args.all_languages)
    try:
        with explained(args.db):
            if args.backtest:
                from analysis.backtest import run_backtest, table

                seeds = list(range(args.seed, args.seed + args.rounds))
                scores, best = run_backtest(args.db, options, args.share, seeds, args.calibrate)
                print(table(scores, best))
                if args.calibrate:
                    print(f"stored threshold {best:.2f} for {args.model} in {args.db}")
            else:
                print(summary(analyse(args.db, options)))
    except (FileNotFoundError, NotALinkspiderDatabase, EmptyCrawl, ModelError, BacktestError, ScopeError, Unwritable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"interrupted: {args.db} holds the queue and tables of the last analysis that finished writing them, and "
              "the page vectors cached so far; run the same command again", file=sys.stderr)
        return 130
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analysis", description=DESCRIPTION)
    add_arguments(parser)
    return run(parser.parse_args(argv))
