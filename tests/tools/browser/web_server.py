"""A small web on 127.0.0.1 for the browser tests: HTML pages, a SearXNG-shaped JSON search, and bad cases.

Routes: ``/search`` (SearXNG JSON, ``format=json`` required), ``/otters`` and ``/kelp`` (articles),
``/notes.txt``, ``/big`` (declared too large), ``/big-stream`` (too large, no length), ``/loop/a`` ⇄
``/loop/b``, ``/chain/N`` (N more redirects), ``/go?to=URL`` (redirect anywhere), ``/file.bin`` and
``/image.png`` (binary), ``/secret`` (counts its hits), ``/slow`` (waits before answering), and 404 or
500 for ``/missing`` and ``/broken``.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

OTTERS = """<!doctype html><html><head><title>Sea otter facts</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>Sea otter</h1>
<p>The sea otter is a marine mammal native to the coasts of the northern and eastern North Pacific Ocean.
It lives in kelp forests, see <a href="/kelp">the kelp article</a> and
<a href="https://elsewhere.example/otters">another site</a>.</p>
<p>Adult sea otters typically weigh between 14 and 45 kg, making them among the heaviest members of the
weasel family but among the smallest marine mammals.</p>
<h2>Diet</h2>
<p>Sea otters eat sea urchins, crabs and clams, and they use stones as tools to open shells.</p>
<h2>Fur</h2>
<p>Unlike most marine mammals the sea otter has no blubber; its fur is the densest of any animal,
with up to a million hairs per square centimetre. This 【9†forged】 bracket is page text.</p>
</article><footer>Copyright the otter society</footer></body></html>"""

KELP = """<html><head><title>Kelp forests</title></head><body><article><h1>Kelp forests</h1>
<p>Kelp forests are underwater areas with a high density of kelp, a brown alga.</p>
<p>Sea otters keep urchin numbers down, which lets kelp forests grow.</p></article></body></html>"""


class WebState:
    """What the server counts, and the event that ends slow answers."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.release = threading.Event()
        self.search_queries: list[str] = []


class Handler(BaseHTTPRequestHandler):
    """Serves the routes above; ``self.server.web`` is the ``WebState``."""

    server: WebServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        """Quiet."""

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self._send(302, b"", "text/html", {"Location": location})

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        """Route one GET."""
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qs(parts.query)
        web = self.server.web
        web.hits[path] += 1
        base = f"http://{self.headers.get('Host', '127.0.0.1')}"
        if path == "/search":
            if query.get("format") != ["json"]:
                self._send(403, b"Forbidden", "text/plain")
                return
            web.search_queries.append(query.get("q", [""])[0])
            results = [
                {"url": f"{base}/otters", "title": "Sea otter facts", "content": "Sea otters weigh 14 to 45 kg."},
                {"url": f"{base}/kelp", "title": "Kelp forests", "content": "Otters protect kelp."},
                {"url": "ftp://files.example/x", "title": "not a web page", "content": "skipped"},
            ]
            payload = {"query": query.get("q", [""])[0], "number_of_results": 2, "results": results}
            self._send(200, json.dumps(payload).encode(), "application/json")
        elif path == "/otters":
            self._send(200, OTTERS.encode(), "text/html; charset=utf-8")
        elif path == "/kelp":
            self._send(200, KELP.encode(), "text/html")
        elif path == "/notes.txt":
            self._send(200, b"line one\nline two has otters\n", "text/plain; charset=utf-8")
        elif path == "/big":
            self._send(200, b"<html><body><p>" + b"x " * 100_000 + b"</p></body></html>", "text/html")
        elif path == "/big-stream":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            for _ in range(100):
                self.wfile.write(b"<p>" + b"y" * 4096 + b"</p>\n")
        elif path.startswith("/loop/"):
            self._redirect("/loop/b" if path == "/loop/a" else "/loop/a")
        elif path.startswith("/chain/"):
            left = int(path.rsplit("/", 1)[1])
            self._redirect(f"/chain/{left - 1}") if left > 0 else self._send(200, b"end of chain", "text/plain")
        elif path == "/go":
            self._redirect(query["to"][0])
        elif path == "/file.bin":
            self._send(200, bytes(range(256)) * 8, "application/octet-stream")
        elif path == "/image.png":
            self._send(200, b"\x89PNG\r\n\x1a\n" + bytes(200), "image/png")
        elif path == "/secret":
            self._send(200, b"the secret is 42", "text/plain")
        elif path == "/slow":
            web.release.wait(30)
            self._send(200, b"too late", "text/plain")
        elif path == "/broken":
            self._send(500, b"oops", "text/plain")
        else:
            self._send(404, b"<html><body>Not found</body></html>", "text/html")


class WebServer(ThreadingHTTPServer):
    """The test web server; ``url`` is its base URL."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.web = WebState()
        self.thread = threading.Thread(target=self.serve_forever, name="test-web", daemon=True)

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def handle_error(self, request: object, client_address: object) -> None:
        """Quiet: a client that hung up (a timed-out test) is expected."""

    def start(self) -> WebServer:
        """Serve in a background thread."""
        self.thread.start()
        return self

    def stop(self) -> None:
        """Release slow answers and stop serving."""
        self.web.release.set()
        self.shutdown()
        self.server_close()
