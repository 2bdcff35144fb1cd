"""A real headless Chromium driven over the DevTools protocol (loopback only), for testing report pages.

``Browser.open(path)`` loads a file, records console errors, uncaught exceptions and every network request
the page makes; ``evaluate`` runs JavaScript in the page; ``click`` dispatches real mouse events at an
element's centre; ``screenshot`` saves a PNG. Skips (or fails under ASSAY_REQUIRE_EXTRAS=1) without chromium.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.extras import unavailable

BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_path() -> str | None:
    return next((path for name in BINARIES if (path := shutil.which(name))), None)


def need_chromium() -> str:
    """The Chromium binary, or a skip (a failure with ASSAY_REQUIRE_EXTRAS=1) naming the package."""
    path = chromium_path()
    if path is None:
        unavailable("needs Chromium for the browser tests: apt-get install chromium")
    assert path is not None
    return path


class Browser:
    """One headless Chromium with one page."""

    def __init__(self, binary: str) -> None:
        from websockets.sync.client import connect

        self._profile = tempfile.mkdtemp(prefix="assay-chromium-")
        self._proc = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--user-data-dir={self._profile}",
                "--window-size=1280,1600",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port = self._port()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            pages = [t for t in json.load(response) if t["type"] == "page"]
        self._stack = contextlib.ExitStack()
        self._ws = self._stack.enter_context(
            connect(pages[0]["webSocketDebuggerUrl"], max_size=None, open_timeout=10)
        )
        self._ids = itertools.count(1)
        self.console_errors: list[str] = []
        self.requests: list[str] = []
        self._loaded = False
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")

    def _port(self) -> int:
        marker = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if marker.exists() and marker.read_text().strip():
                return int(marker.read_text().split()[0])
            if self._proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self._proc.returncode}")
            time.sleep(0.05)
        raise RuntimeError("chromium did not open its DevTools port")

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Call a DevTools method and return its result, recording the events that arrive meanwhile."""
        ident = next(self._ids)
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv(timeout=30))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.console_errors.append(details.get("exception", {}).get("description") or details["text"])
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            self.console_errors.append(
                " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            )
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.console_errors.append(params["entry"]["text"])
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Page.loadEventFired":
            self._loaded = True

    def open(self, path: Path, fragment: str = "") -> None:
        """Load ``path`` (with ``#fragment``) afresh and wait for its load event."""
        self._navigate("about:blank")
        self.requests.clear()
        self._navigate(path.resolve().as_uri() + (f"#{fragment}" if fragment else ""))

    def _navigate(self, url: str) -> None:
        self._loaded = False
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        while not self._loaded and time.monotonic() < deadline:
            self._event(json.loads(self._ws.recv(timeout=30)))
        assert self._loaded, f"{url} did not load"
        self.evaluate("1")  # let the events queued behind the load arrive

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the first element ``selector`` matches."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        x, y = box
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
        self.evaluate("1")

    def screenshot(self, path: Path, *, full_page: bool = True) -> Path:
        """Save a PNG of the page (the whole page by default)."""
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=full_page)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self._stack.close()
        finally:
            self._proc.kill()
            self._proc.wait(timeout=10)
            shutil.rmtree(self._profile, ignore_errors=True)
