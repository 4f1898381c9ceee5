"""Sites crawled and analysed on this machine, several at a time, each in its own `scrapy crawl site -a analyze=true`
process (Twisted's reactor cannot start twice in one process). Politeness stays per site: each crawl has the project's
own limits (robots.txt, AutoThrottle, a few requests in flight)."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from audit.run import Finished
from audit.sites import Site

PROJECT_ROOT = Path(__file__).resolve().parent.parent  # where scrapy.cfg and the packages are


def crawl_command(site: Site, db: Path, max_pages: int, settings: list[str]) -> list[str]:
    """The spider arguments of one site's job; shared with the Scrapyd runner's."""
    return ["crawl", "site", "-a", f"url={site.url}", "-a", f"db={db}", "-a", f"max_pages={max_pages}", "-a", "analyze=true",
            *(["-a", f"exclude={site.exclude}"] if site.exclude else []),
            *(argument for setting in settings for argument in ("-s", setting))]


class LocalRunner:
    def __init__(self, out: Path, max_pages: int, settings: list[str], jobs: int) -> None:
        self.out, self.max_pages, self.settings, self.jobs = out, max_pages, settings, jobs

    def run(self, sites: list[Site], finished: Finished) -> None:
        """Run the sites, `jobs` at a time; on Ctrl-C, start no more and wait for the running ones to stop cleanly."""
        executor = ThreadPoolExecutor(max_workers=self.jobs)
        futures = {executor.submit(self.run_site, site): site for site in sites}
        try:
            for future in as_completed(futures):
                finished(futures[future], future.result())
        finally:
            executor.shutdown(wait=True, cancel_futures=True)

    def run_site(self, site: Site) -> str | None:
        """Crawl and analyse one site; its output goes to `<site>.log`; returns its error line, or None."""
        command = [sys.executable, "-m", "scrapy.cmdline", *crawl_command(site, site.path(self.out, ".db"), self.max_pages, self.settings)]
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")])),
                       "SCRAPY_SETTINGS_MODULE": "linkspider.settings"}
        log = site.path(self.out, ".log")
        with open(log, "w", encoding="utf-8") as handle:
            returncode = subprocess.call(command, cwd=PROJECT_ROOT, stdout=handle, stderr=subprocess.STDOUT, env=environment)
        if returncode == 0:
            return None
        errors = [line.removeprefix("error: ") for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
                  if line.startswith("error: ")]
        return errors[-1] if errors else f"exit status {returncode}; see {log}"
