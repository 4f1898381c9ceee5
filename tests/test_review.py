"""`scrapy review DB decisions.csv`: statuses edited in a spreadsheet come back into the database, or nothing does."""

from __future__ import annotations

import csv
import os
import subprocess
from pathlib import Path

import pytest
import sqlite_utils

from analysis.export import SUGGESTIONS, export_csv
from conftest import ROOT, SCRAPY
from linkspider.db import open_database

PAIRS = [("http://s/a", "http://s/b"), ("http://s/a", "http://s/c"), ("http://s/b", "http://s/c")]


@pytest.fixture
def reviewed(tmp_path: Path) -> tuple[Path, Path]:
    """A database with three pending suggestions and the CSV `scrapy analyze` would have written for it."""
    db = open_database(tmp_path / "site.db")
    db["suggestions"].create(SUGGESTIONS, pk=("source", "target"))
    db["suggestions"].insert_all({"source": s, "target": t, "target_title": "T", "anchor": "an anchor", "anchor_source": "text",
                                  "similarity": 0.5, "score": 1.0 - i / 10, "status": "pending"} for i, (s, t) in enumerate(PAIRS))
    export_csv(db, tmp_path / "site.suggestions.csv")
    return tmp_path / "site.db", tmp_path / "site.suggestions.csv"


def edit(path: Path, statuses: dict[tuple[str, str], str], extra: list[dict] = ()) -> None:
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["status"] = statuses.get((row["from"], row["to"]), row["status"])
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows([*rows, *extra])


def review(db: Path, decisions: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*SCRAPY, "review", str(db), str(decisions)], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def statuses(db: Path) -> dict[tuple[str, str], str]:
    return {(row["source"], row["target"]): row["status"] for row in sqlite_utils.Database(db)["suggestions"].rows}


def test_edited_statuses_are_imported(reviewed: tuple[Path, Path]) -> None:
    db, decisions = reviewed
    edit(decisions, {PAIRS[0]: "approved", PAIRS[1]: " Rejected "})
    done = review(db, decisions)
    assert done.returncode == 0, done.stderr
    assert "Imported 2 decision(s) (1 approved, 1 rejected); 1 unchanged" in done.stdout
    assert statuses(db) == {PAIRS[0]: "approved", PAIRS[1]: "rejected", PAIRS[2]: "pending"}


@pytest.mark.parametrize("extra, statuses_edit, message", [
    ([{"from": "http://s/x", "to": "http://s/y", "status": "approved"}], {}, "line 5: no suggestion from http://s/x to http://s/y"),
    ([], {PAIRS[2]: "maybe"}, "line 4: unknown status 'maybe'"),
])
def test_an_unknown_row_or_status_imports_nothing(reviewed: tuple[Path, Path], extra: list[dict],
                                                  statuses_edit: dict, message: str) -> None:
    db, decisions = reviewed
    edit(decisions, {PAIRS[0]: "approved", **statuses_edit}, [{**row, "to_title": "", "anchor": "", "anchor_source": "",
                                                               "context": "", "similarity": "", "score": ""} for row in extra])
    done = review(db, decisions)
    assert done.returncode == 1
    assert f"error: {message}" in done.stderr and "nothing imported" in done.stderr
    assert set(statuses(db).values()) == {"pending"}


def test_a_csv_without_the_review_columns_is_refused(reviewed: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = reviewed
    other = tmp_path / "other.csv"
    other.write_text("url,verdict\nhttp://s/a,yes\n")
    done = review(db, other)
    assert done.returncode == 1 and "no from, status, to column" in done.stderr


def test_review_help_documents_its_arguments() -> None:
    done = subprocess.run([*SCRAPY, "review", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert "DECISIONS_CSV" in done.stdout and "approved, rejected or done" in done.stdout
