"""The sites file of an audit: one start URL a line, `#` comments and blank lines allowed; after the URL, optionally
`exclude=PATTERN,...`, the crawl's `-a exclude` for that site (its tag pages, its paginated lists)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from linkspider.urls import database_name, is_http_url, normalize_url, site_key


class AuditInputError(ValueError):
    """A sites file or option the audit cannot use; the message says which line and why."""


@dataclass(frozen=True)
class Site:
    url: str  # the start URL, normalised
    name: str  # file stem of everything written for the site: `<host>` or `<host>_<port>`
    exclude: str = ""  # the crawl's -a exclude: URL patterns, comma-separated, neither fetched nor followed

    def path(self, folder: Path, suffix: str) -> Path:
        """One of the site's files in the audit folder, e.g. path(out, ".db")."""
        return folder / f"{self.name}{suffix}"


def read_sites(path: Path) -> list[Site]:
    """The sites in file order; a line that is not an http(s) URL, or a second URL of the same site, is an error."""
    if not path.is_file():
        raise AuditInputError(f"sites file {path} does not exist")
    sites: dict[str, tuple[int, Site]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        text, *options = text.split(" #", 1)[0].split()  # a comment after the URL
        if not is_http_url(text):
            raise AuditInputError(f"{path}, line {number}: not an http(s) URL: {text!r}")
        if len(options) > 1 or options and not options[0].startswith("exclude="):
            raise AuditInputError(f"{path}, line {number}: after the URL only exclude=PATTERN,... may follow, "
                                  f"not {' '.join(options)!r}")
        key = site_key(text)
        if key in sites:
            raise AuditInputError(f"{path}, line {number}: {text} is the same site as line {sites[key][0]}; "
                                  "one start URL per site")
        exclude = options[0].removeprefix("exclude=") if options else ""
        sites[key] = (number, Site(normalize_url(text), database_name(text).removesuffix(".db"), exclude))
    if not sites:
        raise AuditInputError(f"{path} names no site: write one start URL a line")
    return [site for _, site in sites.values()]
