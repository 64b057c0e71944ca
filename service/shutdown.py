"""A gracefully stopping gunicorn worker answers its waiting readers at once.

On SIGTERM (a deploy, `kill -HUP` of the master, a scale-down) or its own max_requests,
gunicorn's worker stops accepting (within a second: its loop looks once a second) and waits
up to graceful_timeout for the requests in flight, then drops whatever is left with no
answer. A long poll would wait its whole bound (LONG_POLL_SECONDS) and then be dropped;
instead every waiting poll answers what it has ([] when nothing came) as soon as the worker
is told to stop, and its client polls again, on a live worker once this one no longer
accepts. An event stream ends likewise, whole, its last message asking its client to come
back after a second (`retry:`), and its client resumes with Last-Event-ID on a live worker.

Once the worker has served its last request, before its process ends, its turn timers and
webhook deliveries hand what they hold back to their schedules, for the workers that live
on to take at once rather than once the stopped worker's claims have run out.
"""

import threading
import time
from typing import Any

from service.hosted.hub import drain_hubs

WATCH_SECONDS = 0.1  # how soon after the signal the readers are answered


def answer_long_polls_on_stop(worker: Any) -> None:
    """Called from gunicorn's post_worker_init hook. The watcher polls worker.alive rather
    than wrapping the signal handler: a gevent worker may not block inside a handler."""

    def watch() -> None:
        while worker.alive:
            time.sleep(WATCH_SECONDS)
        drain_hubs()

    threading.Thread(target=watch, name="drain-long-polls", daemon=True).start()


def hand_over_on_exit(worker: Any) -> None:
    """Called from gunicorn's worker_exit hook, after the worker's last request: a webhook
    attempt in flight may end first (within WEBHOOK_TIMEOUT_SECONDS, its own bound)."""
    app = getattr(worker, "wsgi", None)
    sessions = getattr(app, "extensions", {}).get("sessions")
    if sessions is not None:  # None: the app never loaded
        sessions.hand_over(float(app.config["WEBHOOK_TIMEOUT_SECONDS"]))
