"""An audit from start to end: read the sites, skip those done in an earlier run, run the others (here or on Scrapyd),
record each as it ends, then compare them all in DIR/summary.csv and DIR/index.html."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Protocol

from audit.figures import site_figures
from audit.outputs import SiteRow, write_summary
from audit.sites import Site, read_sites
from audit.state import AuditState


Finished = Callable[[Site, str | None], None]  # told each site as it ends, with its error (None: done)


class Runner(Protocol):
    """Runs the sites, here (audit/local.py) or on Scrapyd (audit/remote.py)."""

    def run(self, sites: list[Site], finished: Finished) -> None: ...


@dataclass
class AuditResult:
    rows: list[SiteRow]
    skipped: int  # done in an earlier run
    summary_csv: Path
    index_html: Path

    @property
    def failed(self) -> list[SiteRow]:
        return [row for row in self.rows if row.status == "failed"]

    def lines(self) -> str:
        done = sum(row.status == "done" for row in self.rows)
        text = [f"Audited {len(self.rows)} sites: {done} done ({self.skipped} of them in an earlier run), {len(self.failed)} failed",
                *(f"  failed: {row.site.url}: {row.error}" for row in self.failed),
                f"  wrote: {self.summary_csv}, {self.index_html}, and per site <site>.db, .suggestions.csv, .report.html "
                f"in {self.summary_csv.parent}"]
        return "\n".join(text)


def audit(sites_file: Path, out: Path, runner_for: Callable[[AuditState], Runner], again: bool = False) -> AuditResult:
    """Run the audit; `again` runs the sites done earlier too (a new batch was published since). Progress goes to
    stderr: a line when it starts, and one as each site ends (an audit of many sites runs for hours)."""
    sites = read_sites(sites_file)
    out.mkdir(parents=True, exist_ok=True)
    state = AuditState(out)
    todo = [site for site in sites if again or state.status(site.url) != "done"]
    started, ended = time.monotonic(), 0
    print(f"Auditing {len(todo)} of {len(sites)} sites into {out} ({len(sites) - len(todo)} done in an earlier run)",
          file=sys.stderr, flush=True)

    def finished(site: Site, error: str | None) -> None:
        nonlocal ended
        state.record(site.url, "failed" if error else "done", error=error)
        ended += 1
        print(f"[{ended}/{len(todo)}, {timedelta(seconds=round(time.monotonic() - started))}] {site.url}: "
              f"{progress_line(site, error, out)}", file=sys.stderr, flush=True)

    try:
        runner_for(state).run(todo, finished)
    finally:
        rows = [row_of(site, state, out) for site in sites]
        summary_csv, index_html = write_summary(out, rows)
    return AuditResult(rows, len(sites) - len(todo), summary_csv, index_html)


def progress_line(site: Site, error: str | None, out: Path) -> str:
    """How one site ended, as the progress says it: its error, or its pages and suggestions."""
    if error:
        return f"failed: {error}"
    figures = site_figures(site.path(out, ".db"))
    return f"done: {figures['pages']} pages, {figures['suggestions']} suggestions"


def row_of(site: Site, state: AuditState, out: Path) -> SiteRow:
    entry = state.sites.get(site.url, {})
    status = entry.get("status") if entry.get("status") in ("done", "failed") else "not finished"
    report = site.path(out, ".report.html")
    return SiteRow(site, status, entry.get("error"), site_figures(site.path(out, ".db")), report if report.is_file() else None)
