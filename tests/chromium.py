"""A headless Chromium driven through the DevTools protocol over a pipe, with the standard library only.

`--remote-debugging-pipe` makes Chromium read commands from fd 3 and write replies and events to fd 4,
as NUL-terminated JSON: no port, no websocket client. Every event is kept, so a test can check what
the page requested, logged and tried to open after the fact. Nothing can leave the machine: every
host name resolves to nothing, and background networking, updates and sync are off.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--remote-debugging-pipe", "--window-size=1280,900"]
TIMEOUT = 30.0


class Chromium:
    """One browser with a fresh profile; `open` loads a file in a new tab and returns its session id."""

    def __init__(self, profile: Path) -> None:
        assert CHROMIUM, "chromium is not installed"
        commands, self._commands = os.pipe()
        self._replies, replies = os.pipe()

        def on_fds_3_and_4() -> None:
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        self.process = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                        pass_fds=(3, 4), preexec_fn=on_fds_3_and_4,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(commands)
        os.close(replies)
        self.events: list[dict] = []
        self._buffer = b""
        self._last_id = 0

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.send("Browser.close")
            self.process.wait(timeout=10)
        except (OSError, TimeoutError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            os.close(self._commands)
            os.close(self._replies)

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        """Send one command and return its result; a protocol error raises."""
        self._last_id += 1
        message = {"id": self._last_id, "method": method, "params": params or {}} | ({"sessionId": session} if session else {})
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        reply = self.wait_for(lambda message, wanted=self._last_id: message.get("id") == wanted)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def wait_for(self, wanted: Callable[[dict], bool]) -> dict:
        """The next message that `wanted` accepts; every event on the way is kept in `events`."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" not in message:
                    self.events.append(message)
                    if message["method"] == "Page.javascriptDialogOpening":  # never let an alert block the page
                        self._last_id += 1
                        os.write(self._commands, json.dumps({"id": self._last_id, "method": "Page.handleJavaScriptDialog",
                                                             "params": {"accept": True},
                                                             "sessionId": message["sessionId"]}).encode() + b"\0")
                if wanted(message):
                    return message
            ready, _, _ = select.select([self._replies], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError(f"no answer from chromium in {TIMEOUT:.0f} s")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise OSError("chromium closed the pipe")
            self._buffer += chunk

    def open(self, path: Path) -> str:
        """Load the file in a new tab with console, network and page events on; return the tab's session."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable", session=session)
        self.send("Page.navigate", {"url": path.resolve().as_uri()}, session)
        self.wait_for(lambda message: message.get("method") == "Page.loadEventFired" and message.get("sessionId") == session)
        return session

    def evaluate(self, session: str, expression: str) -> object:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def screenshot(self, session: str, clip: dict) -> bytes:
        """A PNG of the page region {x, y, width, height} in CSS pixels."""
        data = self.send("Page.captureScreenshot", {"format": "png", "clip": clip | {"scale": 1}, "captureBeyondViewport": True},
                         session)["data"]
        return base64.b64decode(data)

    def of(self, session: str, method: str) -> list[dict]:
        """The parameters of every event of this kind from this tab."""
        return [event["params"] for event in self.events if event["method"] == method and event.get("sessionId") == session]

    def problems(self, session: str) -> list[str]:
        """Console errors and warnings, uncaught exceptions and error log entries (CSP violations, failed loads)."""
        found = [f"console.{call['type']}: {call['args']}" for call in self.of(session, "Runtime.consoleAPICalled")
                 if call["type"] in ("error", "assert", "warning")]
        found += [f"exception: {thrown['exceptionDetails']}" for thrown in self.of(session, "Runtime.exceptionThrown")]
        found += [f"log {entry['entry']['level']}: {entry['entry']['text']}" for entry in self.of(session, "Log.entryAdded")
                  if entry["entry"]["level"] in ("error", "warning")]
        return found
