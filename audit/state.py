"""Where an audit stands, kept in DIR/audit.json so that running it again resumes it.

One entry per start URL: `done`, `failed` (with the error) or `scheduled` (a Scrapyd job, with its server and id).
Written whole to a temporary file and renamed after every change, so an interrupted audit leaves a readable file.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from linkspider.db import utc_now

STATE_FILE = "audit.json"


class AuditState:
    def __init__(self, folder: Path) -> None:
        self.path = folder / STATE_FILE
        self.sites: dict[str, dict] = json.loads(self.path.read_text(encoding="utf-8"))["sites"] if self.path.is_file() else {}
        self.lock = threading.Lock()  # local sites finish in worker threads

    def status(self, url: str) -> str | None:
        return self.sites.get(url, {}).get("status")

    def record(self, url: str, status: str, **details: str | None) -> None:
        with self.lock:
            self.sites[url] = {**self.sites.get(url, {}), "status": status, "at": utc_now(), **details}  # a job's server and id stay
            temporary = self.path.with_name(STATE_FILE + ".tmp")
            temporary.write_text(json.dumps({"sites": self.sites}, indent=1), encoding="utf-8")
            os.replace(temporary, self.path)
