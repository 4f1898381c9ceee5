"""A deliberately hostile site on 127.0.0.1: every bad input the crawler must survive, one path each."""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from linkspider.localserver import running

PAGE = "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title></head><body>{body}</body></html>"
PROSE = "<p>This page has a paragraph of ordinary prose so that the extractor has some main content to keep.</p>"

INDEX_LINKS = ["/error", "/loop-a", "/latin1", "/cyrillic", "/malformed", "/huge", "/binary", "/calendar/2026/1/",
               "/session?sid=1", "/away", "/missing", "/image.png", "/frames/"]


def html(title: str, body: str = "") -> bytes:
    return PAGE.format(title=title, body=body + PROSE).encode()


class BadSiteHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    delay = 0.0  # seconds before each answer: the slow site of the Ctrl-C test

    def do_GET(self) -> None:
        time.sleep(self.delay)
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qs(parts.query)
        if path == "/":
            body = "".join(f'<p>See <a href="{href}">{href}</a> for a case.</p>' for href in INDEX_LINKS)
            self.send(200, html("Bad site", body))
        elif path == "/error":
            self.send(500, html("Server error"))
        elif path in ("/loop-a", "/loop-b"):
            self.redirect(302, "/loop-b" if path == "/loop-a" else "/loop-a")
        elif path == "/away":
            self.redirect(301, "http://elsewhere.invalid/landing")
        elif path == "/latin1":  # labelled UTF-8, written in Windows-1252
            self.send(200, PAGE.format(title="Café crème", body="<p>Un café crème à emporter, s'il vous plaît, avec une brioche.</p>").encode("cp1252"))
        elif path == "/cyrillic":  # correctly labelled, not UTF-8
            self.send(200, PAGE.replace("utf-8", "windows-1251").format(title="Кофе", body="<p>Свежий кофе каждое утро, и немного молока для капучино.</p>").encode("cp1251"),
                      "text/html; charset=windows-1251")
        elif path == "/malformed":
            self.send(200, b"<html><head><title>Broken</title><body><div><p>Unclosed <b>tags <a href='/'>home<p>and more <table><tr><td>cell")
        elif path == "/huge":
            self.send_huge(50 * 1024 * 1024)
        elif path == "/binary":
            self.send(200, bytes(range(256)) * 64)
        elif path.startswith("/calendar/"):  # an endless calendar: every month links to the next
            year, month = (int(part) for part in path.strip("/").split("/")[1:3])
            following = f"/calendar/{year + month // 12}/{month % 12 + 1}/"
            self.send(200, html(f"Calendar {year}-{month}", f'<p>Events this month. <a href="{following}">Next month</a></p>'))
        elif path == "/session":  # a fresh session id on every link
            sid = int(query.get("sid", ["0"])[0])
            self.send(200, html(f"Session {sid}", f'<p><a href="/session?sid={sid + 1}">Continue</a></p>'))
        elif path == "/frames/":  # a frameset, as old manuals and Javadoc wrote their index: no link but its frames
            self.send(200, b"<html><head><title>Manual</title></head><frameset cols='25%,75%'><frame src='toc.html'>"
                           b"<frame src='cover.html'></frameset><noframes><a href='toc.html'>Contents</a></noframes></html>")
        elif path == "/frames/toc.html":
            self.send(200, html("Contents", '<p><a href="chapter.html" target="main">The one chapter</a></p>'))
        elif path in ("/frames/cover.html", "/frames/chapter.html"):
            self.send(200, html(path.rsplit("/", 1)[1].removesuffix(".html").title()))
        elif path == "/image.png":
            self.send(200, b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "image/png")
        elif path == "/robots.txt":
            self.send(200, b"User-agent: *\nAllow: /\n", "text/plain")
        else:
            self.send(404, html("Not found"))

    def send(self, status: int, body: bytes, content_type: str = "text/html; charset=utf-8") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, status: int, location: str) -> None:
        self.send_response(status)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def send_huge(self, size: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        chunk = b"<p>" + b"x" * 1020 + b"</p>"
        try:
            for _ in range(size // len(chunk)):
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the crawler hung up at its size cap, as it should

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Quiet."""


def serve_bad_site(delay: float = 0.0) -> AbstractContextManager[str]:
    """The bad site on a free port of 127.0.0.1 (use with `with`); yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (BadSiteHandler,), {"delay": delay}))
    server.daemon_threads = True
    return running(server)
