"""`scrapy review DB decisions.csv`: import the statuses a person set in the suggestions CSV."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from scrapy.commands import ScrapyCommand


class Command(ScrapyCommand):
    requires_project = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "DB DECISIONS_CSV"

    def short_desc(self) -> str:
        return "Import review decisions (the status column of an edited suggestions CSV) into the database"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("db", metavar="DB", help="the database `scrapy analyze` wrote the suggestions to")
        parser.add_argument("decisions", metavar="DECISIONS_CSV", type=Path,
                            help="the suggestions CSV with its status column set to pending, approved, rejected or done")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        from analysis.review import apply_decisions, read_decisions
        from linkspider.db import NotALinkspiderDatabase, Unwritable, explained, open_existing

        try:
            with explained(opts.db):
                db = open_existing(opts.db)
                decisions = read_decisions(db, opts.decisions)
                if not decisions.problems:
                    apply_decisions(db, decisions)
        except (FileNotFoundError, NotALinkspiderDatabase, Unwritable) as error:
            print(f"error: {error}", file=sys.stderr)
            self.exitcode = 1
            return
        if decisions.problems:
            print("\n".join(f"error: {problem}" for problem in decisions.problems), file=sys.stderr)
            print(f"nothing imported: fix the {len(decisions.problems)} row(s) above and run again", file=sys.stderr)
            self.exitcode = 1
            return
        counts = ", ".join(f"{count} {status}" for status, count in sorted(Counter(decisions.changes.values()).items()))
        print(f"Imported {len(decisions.changes)} decision(s) ({counts or 'none'}); {decisions.unchanged} unchanged; into {opts.db}")
