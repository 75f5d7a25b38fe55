"""The live view's web server: a page, its script, Plotly, and a stream of samples.

A `LiveView` samples the switch in a thread every `interval_s` and keeps the last
`HISTORY_S` seconds. The page (`static/index.html`) loads Plotly from this server (the copy
the `plotly` package installed from PyPI ships: nothing is fetched from the internet),
reads `/history` once, then follows `/events`, a Server-Sent Events stream carrying each
sample as it is taken. Given the switch's log (`--log logs/s1.log`, written at `-L debug`),
`/traces?port=P&n=N` serves the last N packets' per-packet traces on port P, which the page
shows under the plots. The server binds to the loopback only: the page shows a lab switch,
not something to publish.
"""

from __future__ import annotations

import json
import socketserver
import threading
import time
from collections import deque
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import bottle
import plotly

from bufferlab.controller.client import P4RuntimeError
from bufferlab.controller.view.sampler import Sample, Sampler
from bufferlab.controller.view.traces import PacketTraces

HOST = "127.0.0.1"
HISTORY_S = 120.0
STATIC = resources.files("bufferlab.controller.view") / "static"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    """One thread per connection: every open page holds an event stream."""

    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    """No access log on the terminal the Mininet CLI shares."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (base signature)
        """Drop the line."""


class LiveView:
    """Samples a switch in the background and serves the page; use as a context manager."""

    def __init__(self, sampler: Sampler, port: int = 0, interval_s: float = 0.1,
                 labels: dict[int, str] | None = None, title: str = "bufferlab",
                 traces: PacketTraces | None = None) -> None:
        """Nothing runs before `start`; port 0 picks a free one; `traces` follows the
        switch's log for the page's last-packets panel."""
        self.sampler = sampler
        self.traces = traces
        self._traces_lock = threading.Lock()
        self.interval_s = interval_s
        self.labels = labels or {}
        self.title = title
        self.history: deque[dict] = deque(maxlen=max(1, int(HISTORY_S / interval_s)))
        self.error: str | None = None
        self._new = threading.Condition()
        self._stop = threading.Event()
        self._server = make_server(HOST, port, self._app(), server_class=_ThreadingServer,
                                   handler_class=_QuietHandler)
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        """Where the page is."""
        return f"http://{HOST}:{self._server.server_port}/"

    def _app(self) -> bottle.Bottle:
        app = bottle.Bottle()
        app.route("/", callback=self._index)
        app.route("/view.js", callback=lambda: self._static("view.js", "text/javascript"))
        app.route("/plotly.min.js", callback=self._plotly)
        app.route("/history", callback=self._history)
        app.route("/events", callback=self._events)
        app.route("/traces", callback=self._traces)
        return app

    def _static(self, name: str, content_type: str) -> str:
        bottle.response.content_type = content_type
        return (STATIC / name).read_text()

    def _index(self) -> str:
        return self._static("index.html", "text/html; charset=utf-8").replace(
            "{{title}}", self.title)

    def _plotly(self) -> bytes:
        bottle.response.content_type = "text/javascript"
        return PLOTLY_JS.read_bytes()

    def _history(self) -> str:
        bottle.response.content_type = "application/json"
        with self._new:
            samples = list(self.history)
        return json.dumps({"labels": {str(p): n for p, n in self.labels.items()},
                           "ports": self.sampler.ports, "queues": self.sampler.queues,
                           "tofino": self.sampler.tm is not None,
                           "interval_s": self.interval_s, "samples": samples,
                           "error": self.error})

    def _traces(self) -> str:
        bottle.response.content_type = "application/json"
        if self.traces is None:
            return json.dumps({"error": "no switch log: start bufferlab-view with --log "
                                        "(the switch's log, written at -L debug)"})
        try:
            port = int(bottle.request.query.get("port", "-1"))
            n = int(bottle.request.query.get("n", str(self.traces.per_port)))
        except ValueError:
            bottle.response.status = 400
            return json.dumps({"error": "port and n are integers"})
        with self._traces_lock:
            self.traces.poll()
            ports = self.traces.ports()
            packets = self.traces.last(port, n) if port >= 0 else []
        return json.dumps({"ports": ports, "port": port, "packets": packets})

    def _events(self) -> Iterator[str]:
        bottle.response.content_type = "text/event-stream"
        bottle.response.set_header("Cache-Control", "no-cache")
        with self._new:
            seen = len(self.history) and self.history[-1]["t_s"]
        while not self._stop.is_set():
            with self._new:
                self._new.wait(timeout=1.0)
                fresh = [s for s in self.history if s["t_s"] > seen]
            if fresh:
                seen = fresh[-1]["t_s"]
            # A comment line on quiet seconds lets the server notice a closed page.
            yield "".join(f"data: {json.dumps(s)}\n\n" for s in fresh) or ": idle\n\n"

    def _sample_loop(self) -> None:
        # Samples keep their cadence: the wait is what is left of the interval after the read.
        due = time.monotonic()
        while not self._stop.wait(max(due - time.monotonic(), 0.0)):
            due = max(due + self.interval_s, time.monotonic())
            try:
                sample: Sample = self.sampler.sample()
            except P4RuntimeError as err:
                # The switch may be restarting or reloading its pipeline: show it, keep trying.
                self.error = str(err)
                continue
            self.error = None
            with self._new:
                self.history.append(sample.as_json())
                self._new.notify_all()

    def start(self) -> LiveView:
        """Start sampling and serving."""
        for target in (self._sample_loop, self._server.serve_forever):
            thread = threading.Thread(target=target, name="live-view", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        """Stop both threads and close the socket."""
        self._stop.set()
        self._server.shutdown()
        for thread in self._threads:
            thread.join(timeout=5)
        self._server.server_close()

    def __enter__(self) -> LiveView:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
