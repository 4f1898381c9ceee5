"""Review decisions from a person: statuses edited in the suggestions CSV, imported back into the database.

All or nothing: a row that names no suggestion, or a status that is not one of STATUSES, is
reported and nothing is written, so a typo never silently changes or drops a decision.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import sqlite_utils

from analysis.export import STATUSES


@dataclass
class Decisions:
    changes: dict[tuple[str, str], str] = field(default_factory=dict)  # (from, to) -> new status
    unchanged: int = 0
    problems: list[str] = field(default_factory=list)


def read_decisions(db: sqlite_utils.Database, path: Path) -> Decisions:
    """Compare the CSV's statuses with the database's; collect changes and every problem, by line."""
    if "suggestions" not in db.table_names():
        return Decisions(problems=["the database has no suggestions yet: run `scrapy analyze` first"])
    current = {(row["source"], row["target"]): row["status"] for row in db["suggestions"].rows}
    decisions = Decisions()
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = {"from", "to", "status"} - set(reader.fieldnames or ())
        if missing:
            return Decisions(problems=[f"{path}: no {', '.join(sorted(missing))} column (use the CSV `scrapy analyze` wrote)"])
        for line, row in enumerate(reader, start=2):
            key = ((row["from"] or "").strip(), (row["to"] or "").strip())
            status = (row["status"] or "").strip().lower()
            if key not in current:
                decisions.problems.append(f"line {line}: no suggestion from {key[0]} to {key[1]}")
            elif status not in STATUSES:
                decisions.problems.append(f"line {line}: unknown status {row['status']!r} (use one of {', '.join(STATUSES)})")
            elif status != current[key]:
                decisions.changes[key] = status
            else:
                decisions.unchanged += 1
    return decisions


def apply_decisions(db: sqlite_utils.Database, decisions: Decisions) -> None:
    with db.atomic():
        for key, status in decisions.changes.items():
            db["suggestions"].update(key, {"status": status})
