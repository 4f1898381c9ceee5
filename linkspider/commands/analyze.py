"""`scrapy analyze DB`: the analysis (see analysis/), as a Scrapy command."""

from __future__ import annotations

import argparse

from scrapy.commands import ScrapyCommand

from analysis import cli


class Command(ScrapyCommand):
    requires_project = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "DB [options]"

    def short_desc(self) -> str:
        return "Suggest internal links for a crawl database: review queue in SQLite and CSV"

    def long_desc(self) -> str:
        return cli.DESCRIPTION

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        cli.add_arguments(parser)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        self.exitcode = cli.run(opts)
