"""A crawl run as a Scrapyd job keeps its results where Scrapyd serves them, so that a scheduler on another machine
can fetch them over HTTP without shared storage.

Scrapyd starts a job as `scrapy crawl site -a _job=ID -s LOG_FILE=LOGS/PROJECT/site/ID.log ...` and serves LOGS at
`/logs/`. The job's database, and what the analysis writes beside it, go into the folder LOGS/PROJECT/site/ID/
(Scrapyd's clean-up of old logs removes files, not folders), with `outcome.json` last: the exit status, the error if
any, and the files to fetch.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from scrapy.settings import Settings

from linkspider.urls import database_name, is_http_url

OUTCOME = "outcome.json"


@dataclass
class ScrapydJob:
    folder: Path  # served at the job's log URL without its `.log`

    @classmethod
    def of(cls, settings: Settings, spider_args: dict[str, str]) -> ScrapydJob | None:
        """The Scrapyd job this crawl runs as, or None when it does not run under Scrapyd (or Scrapyd keeps no logs)."""
        job, log_file = spider_args.get("_job"), settings.get("LOG_FILE")
        if not job or not log_file:
            return None
        return cls(Path(log_file).parent / Path(job).name)

    def place_database(self, spider_args: dict[str, str]) -> None:
        """Move the `db` argument into the job's folder, keeping its file name (default: `<host>.db` of the start URL)."""
        url = spider_args.get("url", "").split(",")[0].strip()
        name = Path(spider_args.get("db") or (database_name(url) if is_http_url(url) else "site.db")).name
        self.folder.mkdir(parents=True, exist_ok=True)
        spider_args["db"] = str(self.folder / name)

    def write_outcome(self, exitcode: int, error: str | None, db: str) -> None:
        """Fold the database's write-ahead log into it, then say how the job ended and which files it left."""
        if Path(db).is_file():
            with closing(sqlite3.connect(db)) as connection:
                connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        stem = Path(db).stem
        files = sorted(path.name for path in self.folder.iterdir()
                       if path.name.startswith(stem + ".") and path.suffix in (".db", ".csv", ".html"))
        outcome = {"exitcode": exitcode, "error": error, "files": files}
        temporary = self.folder / (OUTCOME + ".tmp")
        temporary.write_text(json.dumps(outcome), encoding="utf-8")
        os.replace(temporary, self.folder / OUTCOME)
