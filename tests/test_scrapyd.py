"""`scrapy audit --scrapyd`: a real Scrapyd on 127.0.0.1, the project deployed as `scrapyd-deploy` builds it, and an
audit of two local fixture sites through it, each site's crawl and analysis one Scrapyd job, the results fetched
over HTTP."""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.request import urlopen

import pytest
import requests
import sqlite_utils

from audit.remote import ScrapydRunner
from audit.sites import read_sites
from audit.state import AuditState
from conftest import ROOT
from linkspider.localserver import serve
from test_audit import run_audit, sites_file, summary
from tinysite import SLUGS, tiny_site

CONFIG = """[scrapyd]
bind_address = 127.0.0.1
http_port = {port}
eggs_dir = {folder}/eggs
logs_dir = {folder}/logs
dbs_dir = {folder}/dbs
items_dir =
max_proc = 2
poll_interval = 0.5
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def scrapyd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Scrapyd on a free port of 127.0.0.1 with linkspider deployed; its own environment has no PYTHONPATH, so its
    jobs run the egg."""
    folder = tmp_path_factory.mktemp("scrapyd")
    port = free_port()
    (folder / "scrapyd.conf").write_text(CONFIG.format(port=port, folder=folder))
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    with open(folder / "scrapyd.out", "w") as log:
        server = subprocess.Popen([sys.executable, "-m", "scrapyd"], cwd=folder, stdout=log, stderr=subprocess.STDOUT,
                                  env=environment)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urlopen(f"{url}/daemonstatus.json", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.skip(f"scrapyd did not start: {(folder / 'scrapyd.out').read_text()[-1000:]}")
                time.sleep(0.3)
        egg = folder / "linkspider.egg"
        built = subprocess.run([Path(sys.executable).with_name("scrapyd-deploy"), "--build-egg", str(egg)], cwd=ROOT,
                               capture_output=True, text=True, timeout=120)
        assert built.returncode == 0, built.stderr
        with open(egg, "rb") as handle:
            deployed = requests.post(f"{url}/addversion.json", data={"project": "linkspider", "version": "1"},
                                     files={"egg": ("linkspider.egg", handle)}, timeout=60).json()
        assert deployed["status"] == "ok" and deployed["spiders"] == 1, deployed
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


@dataclass
class RemoteAudit:
    out: Path
    sites_file: Path
    urls: list[str]
    done: subprocess.CompletedProcess


@pytest.fixture(scope="module")
def remote_audit(scrapyd: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteAudit]:
    folder = tmp_path_factory.mktemp("remote")
    with serve(tiny_site(folder / "one", SLUGS[:5])) as one, serve(tiny_site(folder / "two", SLUGS[3:])) as two:
        path = sites_file(folder, [one, two])
        yield RemoteAudit(folder / "out", path, [one, two], run_audit(path, folder / "out", "--scrapyd", scrapyd))


def test_an_audit_through_scrapyd_runs_one_job_per_site_and_fetches_the_results(scrapyd: str, remote_audit: RemoteAudit) -> None:
    done, out = remote_audit.done, remote_audit.out
    assert done.returncode == 0, done.stderr
    assert "Audited 2 sites: 2 done (0 of them in an earlier run), 0 failed" in done.stdout
    rows = summary(out)
    for url in remote_audit.urls:
        row = rows[url]
        assert row["status"] == "done" and int(row["pages"]) >= 5 and int(row["suggestions"]) > 0
        for suffix in (".db", ".suggestions.csv", ".cannibalization.csv", ".report.html"):
            assert (out / f"{row['site']}{suffix}").is_file()
    jobs = json.loads(urlopen(f"{scrapyd}/listjobs.json?project=linkspider").read())
    assert len(jobs["finished"]) == 2 and {job["spider"] for job in jobs["finished"]} == {"site"}
    state = json.loads((out / "audit.json").read_text())["sites"]
    assert {entry["status"] for entry in state.values()} == {"done"}


def test_review_decisions_are_carried_into_the_database_a_job_built_from_scratch(scrapyd: str, remote_audit: RemoteAudit) -> None:
    """A job's database knows no decision; fetching it again keeps those made in the audit folder's copy."""
    out, site = remote_audit.out, read_sites(remote_audit.sites_file)[0]
    db = sqlite_utils.Database(site.path(out, ".db"))
    rejected, approved = [(row["source"], row["target"]) for row in db["suggestions"].rows][:2]
    db["suggestions"].update(rejected, {"status": "rejected"})
    db["suggestions"].update(approved, {"status": "approved"})
    db.close()
    entry = AuditState(out).sites[site.url]
    runner = ScrapydRunner([scrapyd], "linkspider", out, 0, [], AuditState(out))
    assert runner.collect(entry["server"], entry["job"], site) is None  # the same job's files, fetched again
    statuses = {(row["source"], row["target"]): row["status"] for row in sqlite_utils.Database(site.path(out, ".db"))["suggestions"].rows}
    assert statuses[rejected] == "rejected" and statuses[approved] == "approved"
    with open(site.path(out, ".suggestions.csv"), newline="", encoding="utf-8") as handle:
        shown = {(row["from"], row["to"]): row["status"] for row in csv.DictReader(handle)}
    assert shown[rejected] == "rejected" and shown[approved] == "approved"


def test_an_audit_refuses_a_server_without_the_project(scrapyd: str, tmp_path: Path) -> None:
    done = run_audit(sites_file(tmp_path, ["http://127.0.0.1:1/"]), tmp_path / "out", "--scrapyd", scrapyd,
                     "--project", "elsewhere")
    assert done.returncode == 2 and "error: project 'elsewhere' is not deployed on" in done.stderr
