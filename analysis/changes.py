"""What changed since the last analysis of a database, so that a re-run after a publishing batch says what it did.

Each analysis keeps the pages it analysed (`analysed_pages`: url and content hash) and adds one row to
`analysis_runs`; the next one compares its pages with them: new, changed (embedded again, since the
vector cache is keyed by content hash) and gone; with the export's counts of new suggestions and of
suggestions closed as done because their link now exists.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import sqlite_utils

from analysis.export import replace_table
from analysis.load import Corpus
from linkspider.db import utc_now

ANALYSIS_RUNS = {"finished_at": str, "pages": int, "new_pages": int, "changed_pages": int, "gone_pages": int,
                 "suggestions": int, "new_suggestions": int, "done": int}


@dataclass
class Changes:
    first: bool  # no earlier analysis to compare with
    pages: int
    new_pages: int
    changed_pages: int
    gone_pages: int
    suggestions: int
    new_suggestions: int
    done: int

    def pages_line(self) -> str:
        if self.first:
            return "first analysis of this database"
        return f"{self.new_pages} new, {self.changed_pages} changed (embedded again), {self.gone_pages} gone"


def record_changes(db: sqlite_utils.Database, corpus: Corpus, suggestions: int, counts: dict[str, int]) -> Changes:
    """Compare the corpus with the last analysis' pages, then make it the last analysis; counts are the export's."""
    first = "analysed_pages" not in db.table_names()
    before = {} if first else dict(db.execute("SELECT url, content_hash FROM analysed_pages").fetchall())
    now = dict(zip(corpus.urls, corpus.hashes))
    changes = Changes(
        first=first, pages=len(now),
        new_pages=0 if first else len(now.keys() - before.keys()),
        changed_pages=sum(url in before and before[url] != content_hash for url, content_hash in now.items()),
        gone_pages=len(before.keys() - now.keys()),
        suggestions=suggestions, new_suggestions=counts["new"], done=counts["done"],
    )
    replace_table(db, "analysed_pages", ({"url": url, "content_hash": content_hash} for url, content_hash in now.items()),
                  {"url": str, "content_hash": str})
    db["analysis_runs"].create({"id": int, **ANALYSIS_RUNS}, pk="id", if_not_exists=True)
    fields = asdict(changes)
    del fields["first"]
    with db.atomic():
        db["analysis_runs"].insert({"finished_at": utc_now(), **fields})
    return changes
