"""Review decisions carried into a database a Scrapyd job built from scratch.

A job starts from an empty database on its server, so the site's previous database in the audit folder holds the
decisions: every approved, rejected or done suggestion goes into the fetched one, and a pending or approved one whose
link the new crawl has becomes done, as a local re-analysis would have it. The CSV and the report are then written again so
that they show those statuses. (The job itself may have proposed a rejected pair again: it stays rejected here.)
"""

from __future__ import annotations

from pathlib import Path

import sqlite_utils

from analysis.export import export_csv
from analysis.impact import measure_impact
from analysis.load import resolver
from analysis.report import write_report


def carry_decisions(previous: Path, fetched: Path, csv_path: Path, report_path: Path) -> int:
    """Copy the decisions, rewrite the CSV and the report from the fetched database; returns how many were carried."""
    with sqlite_utils.Database(previous) as old:
        earlier = list(old.query("SELECT * FROM suggestions")) if "suggestions" in old.table_names() else []
    if not earlier:
        return 0
    with sqlite_utils.Database(fetched) as db:
        resolve = resolver(db)
        linked = {(resolve.get(source, source), resolve.get(target, target)) for source, target in
                  db.execute("SELECT source, target FROM links WHERE region = 'content'")}
        proposed = {(source, target) for source, target in db.execute("SELECT source, target FROM suggestions")}
        decided = [row for row in earlier if row["status"] != "pending" or (row["source"], row["target"]) in linked]
        with db.atomic():
            for row in decided:
                key = (row["source"], row["target"])
                status = "done" if row["status"] in ("pending", "approved") and key in linked else row["status"]
                if key in proposed:
                    db["suggestions"].update(key, {"status": status})
                else:
                    db["suggestions"].insert({**row, "status": status}, alter=True)
        write_report(db, measure_impact(db), report_path)
        export_csv(db, csv_path)
    return len(decided)
