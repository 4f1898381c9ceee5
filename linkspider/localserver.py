"""Serve a folder of HTML on 127.0.0.1, as a small static host would: for the demo, tests and benchmarks.

Beyond plain files it honours a Netlify-style `_redirects` file (`/old/ /new/ 301` a line), answers
404 with the folder's `404.html`, and writes its own origin where robots.txt and sitemaps say
`__ORIGIN__` (sitemaps need absolute URLs, and the port is only known when the server starts).

    python -m linkspider.localserver demo/site [--port 8000]
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

ORIGIN_TOKEN = b"__ORIGIN__"


class SiteHandler(SimpleHTTPRequestHandler):
    """Static files plus redirects, a 404 page and origin substitution."""

    redirects: dict[str, tuple[str, int]] = {}

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path in self.redirects:
            target, status = self.redirects[path]
            self.send_response(status)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        local = Path(self.translate_path(path))
        if local.is_dir():
            local = local / "index.html"
        if not local.is_file():
            self._send(404, Path(self.directory) / "404.html", "text/html; charset=utf-8")
            return
        if local.suffix in {".xml", ".txt"}:
            self._send(200, local, self.guess_type(str(local)), substitute=True)
            return
        super().do_GET()

    def _send(self, status: int, file: Path, content_type: str, substitute: bool = False) -> None:
        body = file.read_bytes() if file.is_file() else b"not found"
        if substitute:
            body = body.replace(ORIGIN_TOKEN, f"http://{self.headers.get('Host', '127.0.0.1')}".encode())
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        """Quiet: the crawler's own log says what was fetched."""


def read_redirects(directory: Path) -> dict[str, tuple[str, int]]:
    """`_redirects` lines `FROM TO [STATUS]`, status 301 when omitted; # starts a comment."""
    rules = {}
    file = directory / "_redirects"
    for line in file.read_text().splitlines() if file.is_file() else []:
        fields = line.split("#", 1)[0].split()
        if len(fields) >= 2:
            rules[fields[0]] = (fields[1], int(fields[2]) if len(fields) > 2 else 301)
    return rules


def make_server(directory: str | Path, port: int = 0) -> ThreadingHTTPServer:
    """A server for directory on 127.0.0.1 (port 0: any free port), not yet serving."""
    directory = Path(directory).resolve()
    handler = type("Handler", (SiteHandler,), {"redirects": read_redirects(directory)})
    server = ThreadingHTTPServer(("127.0.0.1", port), partial(handler, directory=str(directory)))
    server.daemon_threads = True
    return server


@contextmanager
def running(server: ThreadingHTTPServer) -> Iterator[str]:
    """Run a server in a background thread; yields its base URL, `http://127.0.0.1:PORT/`."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def serve(directory: str | Path, port: int = 0) -> AbstractContextManager[str]:
    """Serve directory in a background thread (use with `with`); yields its base URL."""
    return running(make_server(directory, port))


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a folder of HTML on 127.0.0.1 (redirects, 404 page, sitemap origin).")
    parser.add_argument("directory", help="folder to serve, e.g. demo/site")
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000; 0 picks a free one)")
    args = parser.parse_args()
    server = make_server(args.directory, args.port)
    print(f"serving {args.directory} at http://127.0.0.1:{server.server_address[1]}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
