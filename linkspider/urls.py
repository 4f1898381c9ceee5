"""URL normalisation and site membership, shared by the spider, the pipeline and the analysis.

Every URL stored in the database goes through :func:`normalize_url`, so pages and link targets
can be joined on plain string equality.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

from w3lib.url import canonicalize_url

DEFAULT_PORTS = {"http": 80, "https": 443}


@lru_cache(maxsize=100_000)
def normalize_url(url: str) -> str:
    """Absolute URL with the fragment dropped, scheme and host lower-cased, default port dropped.

    Query arguments are sorted (w3lib's canonical form) so that `?a=1&b=2` and `?b=2&a=1` are one page.
    Cached: a site's template links repeat the same URLs on every page.
    """
    canonical = canonicalize_url(url.strip())
    parts = urlsplit(canonical)
    netloc = parts.hostname or ""
    if ":" in netloc:  # IPv6 literal
        netloc = f"[{netloc}]"
    if parts.port and parts.port != DEFAULT_PORTS.get(parts.scheme):
        netloc = f"{netloc}:{parts.port}"
    path = parts.path or "/"
    return urlunsplit((parts.scheme, netloc, path, parts.query, ""))


def matches(url: str, pattern: str) -> bool:
    """Whether a shell-style pattern (`*` crosses `/` too; case-sensitive) matches the URL's path with its query
    (`/tag/*`, `*?page=*`) or the whole URL (`https://example.com/tag/*`): the crawl's and the analysis's
    `exclude` patterns."""
    parts = urlsplit(url)
    path = parts.path or "/"
    return fnmatchcase(f"{path}?{parts.query}" if parts.query else path, pattern) or fnmatchcase(url, pattern)


def site_key(url_or_host: str) -> str:
    """The site a URL belongs to: host without `www.`, plus the port when it is not the default.

    `http://www.example.com/` and `https://example.com/` are one site; `127.0.0.1:8000` and
    `127.0.0.1:9000` are two.
    """
    if "//" not in url_or_host:
        url_or_host = f"http://{url_or_host}"
    parts = urlsplit(url_or_host)
    host = (parts.hostname or "").lower().removeprefix("www.")
    if parts.port and parts.port != DEFAULT_PORTS.get(parts.scheme):
        return f"{host}:{parts.port}"
    return host


def database_name(url: str) -> str:
    """Default database file for a start URL: `<host>.db`, a port becoming `_PORT`."""
    return site_key(url).replace(":", "_") + ".db"


def is_http_url(url: str) -> bool:
    """True for an absolute http(s) URL with a host."""
    parts = urlsplit(url.strip())
    return parts.scheme in DEFAULT_PORTS and bool(parts.hostname)
