"""Sites run as jobs on Scrapyd servers: one job per site does the crawl and the analysis (`-a analyze=true`),
and writes its files into a folder Scrapyd serves over HTTP (see linkspider/jobs.py), from which they are fetched.

Jobs are spread over the servers in turn and queued by Scrapyd, which runs up to its `max_proc` at once; the audit
polls each server's listjobs.json and fetches a job's files as soon as it ends, carrying the review decisions of the
site's previous database into the new one (audit/decisions.py). Job ids are kept in audit.json, so an interrupted
audit picks up the jobs it had scheduled instead of scheduling them again.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode
from urllib.request import urlopen

from audit.decisions import carry_decisions
from audit.run import Finished
from audit.sites import AuditInputError, Site
from audit.state import AuditState
from linkspider.jobs import OUTCOME
from linkspider.urls import is_http_url

SPIDER = "site"
POLL_SECONDS = 2.0
UNREACHABLE_SECONDS = 120.0  # a server that answers no poll for this long fails its jobs (run the audit again later)
TIMEOUT = 60.0


def parse_servers(text: str) -> list[str]:
    servers = [part.strip().rstrip("/") for part in text.split(",") if part.strip()]
    for server in servers:
        if not is_http_url(server):
            raise AuditInputError(f"--scrapyd: not an http(s) URL: {server!r} (expected something like http://host:6800)")
    if not servers:
        raise AuditInputError("--scrapyd needs at least one server URL")
    return servers


def request(url: str, form: list[tuple[str, str]] | None = None) -> bytes:
    """GET url, or POST form to it."""
    with urlopen(url, data=urlencode(form).encode() if form is not None else None, timeout=TIMEOUT) as response:
        return response.read()


def api(url: str, form: list[tuple[str, str]] | None = None) -> dict:
    """A Scrapyd API call; an answer whose status is not ok raises AuditInputError with Scrapyd's message."""
    try:
        answer = json.loads(request(url, form))
    except HTTPError as error:  # Scrapyd answers a bad call with an error status and its JSON message
        answer = json.loads(error.read() or b"{}")
    if answer.get("status") != "ok":
        raise AuditInputError(f"{url.split('?')[0]}: {answer.get('message', answer)}")
    return answer


class ScrapydRunner:
    def __init__(self, servers: list[str], project: str, out: Path, max_pages: int, settings: list[str],
                 state: AuditState, poll: float = POLL_SECONDS) -> None:
        self.servers, self.project, self.out, self.max_pages = servers, project, out, max_pages
        self.settings, self.state, self.poll = settings, state, poll

    def run(self, sites: list[Site], finished: Finished) -> None:
        self.check_deployed()
        jobs: dict[tuple[str, str], Site] = {}  # (server, job id) -> site
        for number, site in enumerate(sites):
            entry = self.state.sites.get(site.url, {})
            if entry.get("status") == "scheduled" and entry.get("server") in self.servers:
                jobs[entry["server"], entry["job"]] = site  # scheduled by an interrupted run
                continue
            server = self.servers[number % len(self.servers)]
            job = self.schedule(server, site)
            self.state.record(site.url, "scheduled", server=server, job=job)
            jobs[server, job] = site
        last_answer = {server: time.monotonic() for server in self.servers}
        while jobs:
            time.sleep(self.poll)
            for server in {server for server, _ in jobs}:
                try:
                    listing = api(f"{server}/listjobs.json?{urlencode({'project': self.project})}")
                except (URLError, OSError, ValueError) as error:
                    if time.monotonic() - last_answer[server] > UNREACHABLE_SECONDS:
                        for key in [key for key in jobs if key[0] == server]:
                            finished(jobs.pop(key), f"Scrapyd at {server} stopped answering: {error}")
                    continue
                last_answer[server] = time.monotonic()
                waiting = {job["id"] for kind in ("pending", "running") for job in listing.get(kind, [])}
                for key in [key for key in jobs if key[0] == server and key[1] not in waiting]:
                    finished(jobs[key], self.collect(server, key[1], jobs[key]))
                    del jobs[key]

    def check_deployed(self) -> None:
        for server in self.servers:
            try:
                spiders = api(f"{server}/listspiders.json?{urlencode({'project': self.project})}")["spiders"]
            except AuditInputError as error:
                raise AuditInputError(f"project {self.project!r} is not deployed on {server} ({error}); deploy it with "
                                      "`scrapyd-deploy` from the project folder (see README)") from None
            except (URLError, OSError, ValueError) as error:
                raise AuditInputError(f"cannot reach Scrapyd at {server}: {error}") from None
            if SPIDER not in spiders:
                raise AuditInputError(f"project {self.project!r} on {server} has no {SPIDER!r} spider; deploy linkspider there")

    def schedule(self, server: str, site: Site) -> str:
        """Queue the site's job: the spider arguments a local run would get, the database named after the site."""
        form = [("project", self.project), ("spider", SPIDER), ("url", site.url), ("db", f"{site.name}.db"),
                ("max_pages", str(self.max_pages)), ("analyze", "true"), *([("exclude", site.exclude)] if site.exclude else []),
                *(("setting", setting) for setting in self.settings)]
        return api(f"{server}/schedule.json", form)["jobid"]

    def collect(self, server: str, job: str, site: Site) -> str | None:
        """Fetch an ended job's files into the audit folder; returns its error, or None."""
        folder = f"{server}/logs/{self.project}/{SPIDER}/{job}"
        try:
            outcome = json.loads(request(f"{folder}/{OUTCOME}"))
            fetched: dict[str, Path] = {}
            for name in outcome["files"]:
                if Path(name).name != name or not name.startswith(site.name + "."):
                    return f"the job listed an unexpected file {name!r}; nothing fetched"
                fetched[name] = self.out / (name + ".part")
                fetched[name].write_bytes(request(f"{folder}/{name}"))
        except (URLError, OSError, ValueError, KeyError) as error:
            return f"could not fetch the results of job {job} from {folder}/ ({error}); see {folder}.log"
        parts = [fetched.get(site.path(self.out, suffix).name) for suffix in (".db", ".suggestions.csv", ".report.html")]
        if site.path(self.out, ".db").is_file() and all(parts):
            carry_decisions(site.path(self.out, ".db"), *parts)
        for name, part in fetched.items():
            os.replace(part, self.out / name)
        return outcome["error"]
