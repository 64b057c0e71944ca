"""gunicorn settings: `gunicorn -c gunicorn.conf.py` (counts and port from the environment)."""

import json
import os
from typing import Any

from gunicorn import glogging

wsgi_app = "service.wsgi:app"
bind = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
# The rules engine is CPU-bound: one process per core; threads cover slow clients and I/O.
workers = int(os.environ.get("WEB_CONCURRENCY", os.cpu_count() or 1))
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
