"""`scrapy report DB`: the impact of the review queue, measured again, and the HTML report (see analysis/report.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scrapy.commands import ScrapyCommand


class Command(ScrapyCommand):
    requires_project = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "DB [--out PATH] [--approved-only]"

    def short_desc(self) -> str:
        return "Write the impact report of an analysed crawl database: one self-contained HTML file"

    def long_desc(self) -> str:
        return ("Measure click depth, internal PageRank, inbound content links and orphans with and without the review "
                "queue (no model needed: run it again after approving suggestions), store them in the database, and "
                "write the report: charts, top suggestions with their gain, cannibalisation, orphans, hard-to-reach pages.")

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("db", metavar="DB", help="a database that `scrapy analyze` has analysed")
        parser.add_argument("--out", metavar="PATH", type=Path,
                            help="where to write the report (default: <DB without .db>.report.html beside DB)")
        parser.add_argument("--approved-only", action="store_true",
                            help="apply the approved suggestions only (default: pending and approved)")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        from analysis.impact import NotAnalysed, measure_impact
        from analysis.report import write_report
        from linkspider.db import NotALinkspiderDatabase, Unwritable, explained, open_existing, writing

        try:
            db = open_existing(opts.db)
            with explained(opts.db), writing(db):
                impact = measure_impact(db, opts.approved_only)
        except (FileNotFoundError, NotALinkspiderDatabase, NotAnalysed, Unwritable) as error:
            print(f"error: {error}", file=sys.stderr)
            self.exitcode = 1
            return
        path = write_report(db, impact, opts.out or Path(opts.db).with_suffix(".report.html"))
        print(f"with the {impact.applied} queued links, {impact.headline()}\nwrote {path}")
