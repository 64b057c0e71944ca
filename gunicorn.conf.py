"""gunicorn settings: `gunicorn -c gunicorn.conf.py` (counts and port from the environment)."""

import os
import re
import sys
import tempfile
from json.encoder import encode_basestring_ascii  # json.dumps of a str, in C
from pathlib import Path
from typing import Any

from gunicorn import glogging

wsgi_app = "service.wsgi:app"
# This machine only, unless HOST says otherwise (the Docker image sets 0.0.0.0).
bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
# Long polls (GET /v1/sessions/{id}/events) wait up to LONG_POLL_SECONDS. Under gevent a
# waiting client costs a greenlet and a socket, not a thread, so thousands can wait while
# moves are served; redis-py and the in-process store's locks cooperate once gevent has
# monkey-patched the worker. GUNICORN_WORKER_CLASS=gthread restores threads (GUNICORN_THREADS).
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gevent")
worker_connections = int(os.environ.get("GUNICORN_WORKER_CONNECTIONS", "1000"))
# The rules engine is CPU-bound: one process per core. Without Redis (REDIS_URL or
# REDIS_SENTINELS) hosted sessions live in one process's memory (the in-process store), so
# then there is exactly one worker.
workers = (
    int(os.environ.get("WEB_CONCURRENCY", os.cpu_count() or 1))
    if os.environ.get("REDIS_URL") or os.environ.get("REDIS_SENTINELS")
    else 1
)
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
# Fair turns under gevent: gevent's recv returns at once when the next request of a
# keep-alive connection has already arrived, so a connection whose client answers fast
# is served again and again without yielding while the others wait (p99 in the hundreds of
# ms for CPU-bound requests). After each answer the greenlet steps aside until the next turn
# of the event loop, behind every connection with a request waiting.
# GUNICORN_FAIR_TURNS=0 turns this off (to compare worker models).
fair_turns = os.environ.get("GUNICORN_FAIR_TURNS", "1") != "0"
TURN_SECONDS = 1e-6  # any delay > 0 waits for the loop's next turn; sleep(0) would not
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 10
keepalive = 5

accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
access_log_format = (
    '{"time": "%(t)s", "remote": "%(h)s", "method": "%(m)s", "path": "%(U)s", '
    '"query": "%(q)s", "status": %(s)s, "bytes": "%(b)s", "duration_ms": %(M)s, '
    '"request_id": "%({x-request-id}o)s", "user_agent": "%(a)s"}'
)


# The atoms the format reads. gunicorn offers some fifty a request (every request and
# response header, every environ entry): building and escaping them all cost more than the
# whole answer of a stateless request, so only these are built.
FORMAT_ATOMS = frozenset(re.findall(r"%\(([^)]+)\)s", access_log_format))
ENVIRON_ATOMS = frozenset(atom for atom in FORMAT_ATOMS if atom.endswith("}e"))
# The environ entries gunicorn's own atoms read (h, u, r, m, U, q, H, f, a).
ATOM_ENVIRON = (
    "REMOTE_ADDR",
    "HTTP_AUTHORIZATION",
    "REQUEST_METHOD",
    "RAW_URI",
    "SERVER_PROTOCOL",
    "PATH_INFO",
    "QUERY_STRING",
    "HTTP_REFERER",
    "HTTP_USER_AGENT",
)


class JsonAtoms(dict):
    """The atoms the format reads, each escaped as JSON string content as json.dumps escapes
    a string (gunicorn's own escape covers quotes only), so every access line is one valid
    JSON object whatever a client puts in its path or headers. A header atom is found
    whatever its case and a missing atom is "-", as gunicorn's SafeAtoms has it."""

    def __init__(self, atoms: dict[str, Any]) -> None:
        super().__init__(
            (
                key,
                encode_basestring_ascii(str(atoms.get(key.lower() if key[0] == "{" else key, "-")))[
                    1:-1
                ],
            )
            for key in FORMAT_ATOMS
        )


class Named:
    """A request or response as the access log sees it: only the headers the format names
    (`{name}i` for the request's, `{name}o` for the response's)."""

    def __init__(self, message: Any, kind: str) -> None:
        self.status = getattr(message, "status", None)
        self.sent = getattr(message, "sent", None)
        self.headers = [
            (name, value) for name, value in message.headers
            if f"{{{name.lower()}}}{kind}" in FORMAT_ATOMS
        ]  # fmt: skip


class JsonAccessLogger(glogging.Logger):
    atoms_wrapper_class = JsonAtoms

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> dict:
        """gunicorn's own atoms, from only the headers and environ entries they read or the
        format names."""
        named = {key: environ[key] for key in ATOM_ENVIRON if key in environ}
        if ENVIRON_ATOMS:
            named.update((k, v) for k, v in environ.items() if f"{{{k.lower()}}}e" in ENVIRON_ATOMS)
        return super().atoms(Named(resp, "o"), Named(req, "i"), named, request_time)


logger_class = JsonAccessLogger


# -- Operations: metrics summed over workers, long polls answered on a graceful stop. --------
# prometheus_client's multiprocess mode: workers write samples under this directory, which
# must exist before any worker imports it and must not hold a previous run's files.
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="basra-metrics-")


def when_ready(server: Any) -> None:
    """Say where to go, whatever the log level: the play page and the API's docs, at the
    address gunicorn listens on (localhost for the loopback or every interface)."""
    for listener in server.LISTENERS:
        address = listener.sock.getsockname()
        if not isinstance(address, tuple):
            continue  # a unix socket: no URL to give
        host, port = address[:2]
        everywhere = host in {"0.0.0.0", "::"}
        shown = "localhost" if everywhere or host in {"127.0.0.1", "::1"} else host
        url = f"http://{f'[{shown}]' if ':' in shown else shown}:{port}"
        where = f"{url} (every interface)" if everywhere else url
        print(f"Serving on {where}: play at {url}/play, the API at {url}/docs/",
              file=sys.stderr, flush=True)  # fmt: skip


def on_starting(server: Any) -> None:
    directory = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink()


def child_exit(server: Any, worker: Any) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def post_worker_init(worker: Any) -> None:
    from service.shutdown import answer_long_polls_on_stop

    answer_long_polls_on_stop(worker)


def post_request(worker: Any, req: Any, environ: dict[str, Any], resp: Any) -> None:
    """gunicorn hook, after each answer is written: a gevent worker's fair turn."""
    if fair_turns and worker.__class__.__module__ == "gunicorn.workers.ggevent":
        import gevent  # only a gevent worker has gevent's hub to yield to

        gevent.sleep(TURN_SECONDS)
