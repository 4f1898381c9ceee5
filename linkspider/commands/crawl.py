"""`scrapy crawl site`: Scrapy's crawl command, plus argument checks, a summary and an exit status."""

from __future__ import annotations

import argparse
import sys

from scrapy.commands.crawl import Command as ScrapyCrawl

from linkspider.db import open_existing
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
        try:
            options = CrawlOptions.parse(**{k: v for k, v in opts.spargs.items() if k in CrawlOptions.ARGUMENTS})
        except CrawlArgumentError as error:
            print(f"error: {error}", file=sys.stderr)
            self.exitcode = 2
            return
        crawler = self._create_crawler(SiteSpider.name)
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        crawl_id = crawler.stats.get_value("linkspider/crawl_id")
        if crawl_id is None:
            print(f"error: the crawl did not start; see the log above ({options.db} untouched)", file=sys.stderr)
            self.exitcode = 1
            return
        db = open_existing(options.db)
        print(crawl_summary(db, crawl_id))
        if problem := crawl_problem(db, crawl_id, options.start_urls):
            print(f"error: {problem}", file=sys.stderr)
            self.exitcode = 1
