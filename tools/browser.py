"""A built book in headless Chromium: the one loopback server and the one page dump of the browser checks.

:class:`Site` serves a built site (``_build/html``) on 127.0.0.1 (a free port), optionally adding a
measuring script to every HTML page it serves, and records each requested path with its status;
:func:`dump_dom` loads one page in headless Chromium (1280 x 900 unless told otherwise) and returns
the DOM after the page's scripts ran. ``tools/check_layout.py``, ``tests/test_book.py`` and
``tests/test_result_box.py`` use both.

Examples
--------
>>> from pathlib import Path
>>> from tools.browser import Site
>>> with Site(Path(".")) as site:
...     site.url("index.html").startswith("http://127.0.0.1:")
True
"""
from __future__ import annotations

import functools
import http.server
import io
import shutil
import subprocess
import threading
from pathlib import Path

__all__ = ["chromium", "Site", "dump_dom"]


def chromium() -> str | None:
    """The path of a Chromium (or Chrome) on PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Site:
    """``root`` served on 127.0.0.1; ``inject`` (HTML) is added before ``</body>`` of every HTML page.

    ``requests`` lists ``(path, status)`` of every request, for checks that nothing is missing.
    """

    def __init__(self, root: Path, inject: str = ""):
        self.requests: list[tuple[str, int]] = []
        log, script = self.requests, inject.encode()

        class Handler(http.server.SimpleHTTPRequestHandler):
            def send_head(self):
                path = Path(self.translate_path(self.path))
                if not (script and path.suffix == ".html" and path.is_file()):
                    return super().send_head()
                body = path.read_bytes().replace(b"</body>", script + b"</body>", 1)
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                return io.BytesIO(body)

            def log_request(self, code="-", size="-"):
                log.append((self.path.split("?")[0], int(code) if str(code).isdigit() else 0))

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, page: str) -> str:
        """The address of ``page`` (a path relative to the site's root)."""
        return f"http://127.0.0.1:{self.port}/{page.lstrip('/')}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def dump_dom(browser: str, url: str, profile: Path, budget_ms: int = 10000,
             window: str = "1280,900") -> subprocess.CompletedProcess:
    """Load ``url`` in headless Chromium (its own ``profile`` folder) and dump the DOM to ``stdout``.

    ``budget_ms`` of virtual time lets the page's scripts (MathJax, a measuring script) finish.
    """
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--hide-scrollbars", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", f"--user-data-dir={profile}", f"--window-size={window}",
           f"--virtual-time-budget={budget_ms}", "--dump-dom", url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)
