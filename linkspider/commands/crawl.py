"""`scrapy crawl site`: Scrapy's crawl command, plus argument checks, a summary, an exit status and, with
`-a analyze=true`, the analysis of the database once the crawl ends (so that one Scrapyd job does both)."""

from __future__ import annotations

import argparse
import sys

from scrapy.commands.crawl import Command as ScrapyCrawl

from linkspider.db import open_existing
from linkspider.jobs import ScrapydJob
from linkspider.spiders.site import CrawlArgumentError, CrawlOptions, SiteSpider
from linkspider.summary import crawl_problem, crawl_summary


class Command(ScrapyCrawl):
    def short_desc(self) -> str:
        return "Crawl a site into an SQLite audit database: scrapy crawl site -a url=https://example.com/"

    def long_desc(self) -> str:
        arguments = "; ".join(f"-a {name}={value}: {meaning}" for name, (value, meaning) in CrawlOptions.HELP.items())
        return f"{self.short_desc()}. Arguments of the site spider: {arguments}."

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if args != [SiteSpider.name]:
            return super().run(args, opts)
        job = ScrapydJob.of(self.settings, opts.spargs)
        if job:
            job.place_database(opts.spargs)
        self.exitcode, error = self._crawl_and_analyse(opts)
        if error:
            print(f"error: {error}", file=sys.stderr)
        if job:
            job.write_outcome(self.exitcode, error, opts.spargs["db"])

    def _crawl_and_analyse(self, opts: argparse.Namespace) -> tuple[int, str | None]:
        """The exit status and the one-line error, if any."""
        try:
            options = CrawlOptions.parse(**{k: v for k, v in opts.spargs.items() if k in CrawlOptions.ARGUMENTS})
        except CrawlArgumentError as error:
            return 2, str(error)
        crawler = self._create_crawler(SiteSpider.name)
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        crawl_id = crawler.stats.get_value("linkspider/crawl_id")
        if crawl_id is None:
            return 1, f"the crawl did not start; see the log above ({options.db} untouched)"
        db = open_existing(options.db)
        print(crawl_summary(db, crawl_id, crawler.stats.get_value("linkspider/excluded", 0)))
        if problem := crawl_problem(db, crawl_id, options.start_urls):
            return 1, problem
        if options.analyze:
            return analyse(options.db)
        return 0, None


def analyse(db: str) -> tuple[int, str | None]:
    """`scrapy analyze DB` with its default options, in this process (the reactor is no longer needed)."""
    from analysis.embed import ModelError
    from analysis.load import EmptyCrawl
    from analysis.pipeline import Options, run
    from analysis.summary import summary

    try:
        print(summary(run(db, Options(progress=False))))
    except (EmptyCrawl, ModelError) as error:
        return 1, f"analysis: {error}"
    return 0, None
