"""gunicorn settings: `gunicorn -c gunicorn.conf.py` (counts and port from the environment)."""

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from gunicorn import glogging

wsgi_app = "service.wsgi:app"
bind = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"
# Long polls (GET /v1/sessions/{id}/events) wait up to LONG_POLL_SECONDS. Under gevent a
# waiting client costs a greenlet and a socket, not a thread, so thousands can wait while
# moves are served; redis-py and the in-process store's locks cooperate once gevent has
# monkey-patched the worker. GUNICORN_WORKER_CLASS=gthread restores threads (GUNICORN_THREADS).
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gevent")
worker_connections = int(os.environ.get("GUNICORN_WORKER_CONNECTIONS", "1000"))
# The rules engine is CPU-bound: one process per core. Without REDIS_URL hosted sessions live
# in one process's memory (the in-process store), so then there is exactly one worker.
workers = (
    int(os.environ.get("WEB_CONCURRENCY", os.cpu_count() or 1))
    if os.environ.get("REDIS_URL")
    else 1
)
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
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


class JsonAtoms(glogging.SafeAtoms):
    """Atoms escaped as JSON string content (gunicorn's own escape covers quotes only), so
    every access line is one valid JSON object whatever a client puts in its path or headers."""

    def __init__(self, atoms: dict[str, Any]) -> None:
        dict.__init__(self, {key: json.dumps(str(value))[1:-1] for key, value in atoms.items()})


class JsonAccessLogger(glogging.Logger):
    atoms_wrapper_class = JsonAtoms


logger_class = JsonAccessLogger


# -- Operations: metrics summed over workers, long polls answered on a graceful stop. --------
# prometheus_client's multiprocess mode: workers write samples under this directory, which
# must exist before any worker imports it and must not hold a previous run's files.
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="basra-metrics-")


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
