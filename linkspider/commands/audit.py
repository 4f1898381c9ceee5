"""`scrapy audit SITES_FILE --out DIR`: crawl and analyse many sites, here or on Scrapyd servers (see audit/)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scrapy.commands import ScrapyCommand


class Command(ScrapyCommand):
    requires_project = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "SITES_FILE --out DIR [--max-pages N] [--jobs N] [--scrapyd URL[,URL...] [--project NAME]] [--again] [-s NAME=VALUE]"

    def short_desc(self) -> str:
        return "Crawl and analyse many sites (one start URL a line) and compare them in DIR/summary.csv and DIR/index.html"

    def long_desc(self) -> str:
        return (f"{self.short_desc()}. Each site gets its database, suggestions CSV and report in DIR. A failing site is "
                "recorded with its error and the others go on; running the same command again resumes the audit "
                "(sites done are skipped). Settings given with -s apply to every crawl.")

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("sites", metavar="SITES_FILE", type=Path,
                            help="one start URL a line; blank lines and lines starting with # are skipped")
        parser.add_argument("--out", metavar="DIR", type=Path, required=True,
                            help="folder for every site's files, audit.json (the audit's progress) and the summary")
        parser.add_argument("--max-pages", metavar="N", type=int, default=0,
                            help="pages per site at most (default: 0, no limit)")
        parser.add_argument("--jobs", metavar="N", type=int, default=2,
                            help="sites crawled and analysed at once on this machine (default: 2; with --scrapyd the "
                                 "servers' own max_proc applies)")
        parser.add_argument("--scrapyd", metavar="URL[,URL...]",
                            help="run each site as a job on these Scrapyd servers (the project deployed there) and fetch "
                                 "the results over HTTP (default: run here)")
        parser.add_argument("--project", metavar="NAME", default="linkspider",
                            help="the Scrapyd project to run (default: linkspider)")
        parser.add_argument("--again", action="store_true",
                            help="run the sites done in an earlier run too, e.g. after a publishing batch "
                                 "(default: resume, skipping them)")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        from audit.local import LocalRunner
        from audit.remote import ScrapydRunner, parse_servers
        from audit.run import audit
        from audit.sites import AuditInputError
        from audit.state import AuditState

        out = opts.out.resolve()
        settings = list(opts.set or [])
        try:
            if opts.max_pages < 0 or opts.jobs < 1:
                raise AuditInputError("--max-pages must be 0 or more and --jobs at least 1")
            servers = parse_servers(opts.scrapyd) if opts.scrapyd else []

            def runner_for(state: AuditState) -> ScrapydRunner | LocalRunner:
                if servers:
                    return ScrapydRunner(servers, opts.project, out, opts.max_pages, settings, state)
                return LocalRunner(out, opts.max_pages, settings, opts.jobs)

            result = audit(opts.sites, out, runner_for, opts.again)
        except AuditInputError as error:
            print(f"error: {error}", file=sys.stderr)
            self.exitcode = 2
            return
        except KeyboardInterrupt:
            print(f"interrupted: the sites finished so far are recorded in {out}; run the same command again to resume",
                  file=sys.stderr)
            self.exitcode = 130
            return
        print(result.lines())
        if result.failed:
            print(f"error: {len(result.failed)} of {len(result.rows)} sites failed (their errors are in "
                  f"{result.summary_csv})", file=sys.stderr)
            self.exitcode = 1
