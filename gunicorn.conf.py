"""gunicorn settings: `gunicorn -c gunicorn.conf.py` (counts and port from the environment)."""

import logging
import os
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import orjson
from gunicorn import glogging

wsgi_app = "service.wsgi:app"


def setting(name: str, default: str, read: type = int, least: float = 1) -> Any:
    """The environment's number `name` (else `default`): a word, a fraction for a count, or a
    number below `least` stops the start with a message naming the setting (before,
    gunicorn's "invalid literal for int()" named nothing)."""
    text = os.environ.get(name, default)
    try:
        value = read(text.strip())
    except ValueError:
        value = None
    if value is None or not value >= least or value == float("inf"):
        kind = "a whole number" if read is int else "a number of seconds"
        raise SystemExit(f"{name}={text!r} is not {kind} of at least {least:g}")
    return value

# This machine only, unless HOST says otherwise (the Docker image sets 0.0.0.0).
bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
# Long polls (GET /v1/sessions/{id}/events) wait up to LONG_POLL_SECONDS. Under gevent a
# waiting client costs a greenlet and a socket, not a thread, so thousands can wait while
# moves are served; redis-py and the in-process store's locks cooperate once gevent has
# monkey-patched the worker. GUNICORN_WORKER_CLASS=gthread restores threads (GUNICORN_THREADS).
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gevent")
worker_connections = setting("GUNICORN_WORKER_CONNECTIONS", "1000")
# The rules engine is CPU-bound: one process per core. Without Redis (REDIS_URL or
# REDIS_SENTINELS) hosted sessions live in one process's memory (the in-process store), so
# then there is exactly one worker.
IN_PROCESS = not (os.environ.get("REDIS_URL") or os.environ.get("REDIS_SENTINELS"))
workers = 1 if IN_PROCESS else setting("WEB_CONCURRENCY", str(os.cpu_count() or 1))
threads = setting("GUNICORN_THREADS", "8")
# Fair turns under gevent: gevent's recv returns at once when the next request of a
# keep-alive connection has already arrived, so a connection whose client answers fast
# is served again and again without yielding while the others wait (p99 in the hundreds of
# ms for CPU-bound requests). After an answer, once the event loop has not turned for a
# slice, the greenlet steps aside until its next turn, behind every connection with a
# request waiting. Stepping aside after every answer instead costs a loop turn a request, a
# fifth of a stateless call's CPU; a slice of 2 ms keeps a waiting connection's turn within
# a few requests' time. GUNICORN_FAIR_TURNS=0 turns this off (to compare worker models).
fair_turns = os.environ.get("GUNICORN_FAIR_TURNS", "1") != "0"
TURN_SECONDS = 1e-6  # any delay > 0 waits for the loop's next turn; sleep(0) would not
SLICE_SECONDS = setting("GUNICORN_SLICE_SECONDS", "0.002", float, least=0)
timeout = setting("GUNICORN_TIMEOUT", "30", least=0)  # 0: gunicorn's no timeout
graceful_timeout = 10
keepalive = 5

accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")


# The handlers gunicorn sets up for --access-logfile, whose formatter is the bare message.
PLAIN_HANDLERS = (logging.StreamHandler, logging.FileHandler)


class JsonAccessLogger(glogging.Logger):
    """gunicorn's logger, whose access line is one JSON object written by orjson from the
    fields it holds, so that it is valid JSON whatever a client puts in its path or
    headers: time, remote, method, path, query, status, bytes, duration_ms, request_id (the
    answer's X-Request-ID) and user_agent. gunicorn's own access line builds some fifty
    atoms a request (every request and response header, every environ entry) and then a
    %-format of them, which cost a tenth of a stateless call's CPU.

    The line goes straight to gunicorn's own handler (its file or standard output) under
    the handler's lock: through logging's record, caller lookup and handler chain it cost
    about 20 us more a request in a gevent worker, an eighth of what a worker spends on a
    stateless apply (bench.http: 0.76 of the echo floor with it, 0.83 without). Any other
    handler (syslog, a logconfig) still gets a record."""

    def access(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> None:
        if not self.access_log.handlers:  # no access log configured
            return
        from service.hosted.tokens import without_tokens  # in a worker, as in shown_path

        line = {
            "time": self.now(),
            "remote": environ.get("REMOTE_ADDR", "-"),
            "method": environ.get("REQUEST_METHOD", "-"),
            "path": shown_path(environ.get("PATH_INFO", "-")),
            "query": without_tokens(environ.get("QUERY_STRING", "")),
            "status": status_code(resp),
            "bytes": "-" if getattr(resp, "sent", None) is None else str(resp.sent),
            "duration_ms": request_time.seconds * 1000 + request_time.microseconds // 1000,
            "request_id": next(
                (value for name, value in resp.headers if name.lower() == "x-request-id"), "-"
            ),
            "user_agent": without_tokens(environ.get("HTTP_USER_AGENT", "-")),
        }
        try:
            text = orjson.dumps(line).decode()
            for handler in self.access_log.handlers:
                if type(handler) in PLAIN_HANDLERS:  # gunicorn's file or stream: the line as is
                    with handler.lock:  # type: ignore[union-attr]
                        handler.stream.write(text + handler.terminator)
                        handler.stream.flush()
                else:
                    handler.handle(self.access_log.makeRecord(
                        self.access_log.name, logging.INFO, "", 0, text, (), None))
        except Exception:
            self.error(traceback.format_exc())


SESSIONS = "/v1/sessions/"


def shown_path(path: str) -> str:
    """A path as the log writes it: a session's segment only when it is an id this service
    could have issued (as its 404 names it), else `<not-an-id>`. A client that put its token
    where the id goes wrote the token to the access line."""
    if not path.startswith(SESSIONS):
        return path
    from service.hosted.tokens import issued  # in a worker: the master never loads the app

    session_id, slash, rest = path.removeprefix(SESSIONS).partition("/")
    return path if issued(session_id) else f"{SESSIONS}<not-an-id>{slash}{rest}"


def pre_request(worker: Any, req: Any) -> None:
    """gunicorn's own debug line of each request, its path as the access line shows it
    (the path looked at only when the line is written)."""
    if worker.log.error_log.isEnabledFor(logging.DEBUG):
        worker.log.debug("%s %s", req.method, shown_path(req.path))


def status_code(resp: Any) -> int | None:
    """The answer's status code. An answer gunicorn writes itself for a request it cannot
    parse (a Content-Length that is not a number, ...) has only its status line `status`
    ("400 Bad Request"), no `status_code`: reading that one raised, and gunicorn then
    answered the client's 400 with a 500."""
    code = getattr(resp, "status_code", None)
    if code is None and isinstance(resp.status, str):
        head = resp.status.split(None, 1)[0]
        code = int(head) if head.isdigit() else None
    return code


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
    if IN_PROCESS:
        print("Hosted sessions live in this process's memory: a restart, a reload (SIGHUP) or "
              "a worker replaced (timeout, out of memory) loses every one of them; set "
              "REDIS_URL to keep them in Redis"
              + (" (max_requests is off: each replacement would lose them)"
                 if server.cfg.max_requests else ""),
              file=sys.stderr, flush=True)  # fmt: skip


def pre_fork(server: Any, worker: Any) -> None:
    """Without Redis the one worker holds every session: gunicorn's worker recycling
    (max_requests, from the command line or GUNICORN_CMD_ARGS) would replace it, and every
    session with it (a 404 to each of their clients), every so many requests.

    SIGTERM is held back across the fork: the new worker lets it in (post_fork) only once
    its own handler is set, and the master as soon as the fork returns (on_starting)."""
    if IN_PROCESS:
        worker.max_requests = sys.maxsize  # what gunicorn sets when max_requests is 0
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def let_sigterm_in() -> None:
    """Delivers a SIGTERM held back since pre_fork, to whatever handler is set now."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def on_starting(server: Any) -> None:
    os.register_at_fork(after_in_parent=let_sigterm_in)  # gunicorn has no hook there
    directory = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink()


def child_exit(server: Any, worker: Any) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def post_fork(server: Any, worker: Any) -> None:
    """A new worker sets its own signal handlers only once gevent has patched it: until
    then a SIGTERM (a stop just after a worker was replaced: an out-of-memory kill, a
    recycle) went to the master's handler, inherited and useless here, and the worker served
    on, from the listening socket it inherited, until the master SIGKILLed it at
    graceful_timeout, cutting whatever it was answering. Until its own handler is set, a
    SIGTERM ends its loop as soon as that starts (gunicorn's handler does no more). One that
    came between the fork and this hook was held back (pre_fork) and arrives here."""

    def stop(signum: int, frame: Any) -> None:
        worker.alive = False

    signal.signal(signal.SIGTERM, stop)
    let_sigterm_in()


def post_worker_init(worker: Any) -> None:
    from service.shutdown import answer_long_polls_on_stop

    answer_long_polls_on_stop(worker)
    answer_refusals_as_problems()
    unquote_refused_header_lines(worker)


def worker_exit(server: Any, worker: Any) -> None:
    from service.shutdown import hand_over_on_exit

    hand_over_on_exit(worker)


def answer_refusals_as_problems() -> None:
    """gunicorn answers a request it cannot parse (a bad header, a request line too long, a
    Content-Length that is not a number) itself, before the app, with an HTML page: this
    worker answers those with problem details instead, as every other 4xx (contract.md:
    never an HTML error page). gunicorn's workers call `util.write_error` through the module,
    so replacing it there reaches each of them."""
    from gunicorn import util

    from service.errors import PROBLEM_JSON, problem_body

    def write_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
        body = orjson.dumps(problem_body(status_int, mesg or reason))
        head = (
            f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
            f"Content-Type: {PROBLEM_JSON}\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        util.write_nonblock(sock, head.encode("latin-1") + body)

    util.write_error = write_error


def unquote_refused_header_lines(worker: Any) -> None:
    """gunicorn refuses a header line that is not `Name: value` by quoting the whole line,
    in its warning log line and in its answer: a client's `Authorization Bearer <token>`
    (the colon forgotten) put the token in the log. Such a refusal says "a malformed header
    line" instead. gunicorn's other refusals of a header name it by its upper-cased name
    (`AUTHORIZATION` for a forbidden character in the value): those are kept."""
    from gunicorn.http.errors import InvalidHeader

    handle = worker.handle_error

    def handle_error(req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        line = str(getattr(exc, "hdr", ""))
        if isinstance(exc, InvalidHeader) and line.find(":") <= 0 and not line.isupper():
            exc = InvalidHeader("a malformed header line", req=exc.req)
        handle(req, client, addr, exc)

    worker.handle_error = handle_error


# The event loop's turn (libev's iteration count) when an answer was last written, and when
# the first answer of that turn was. A turn is not timed by the loop's own clock: starting a
# timer (any socket timeout) may update that clock without polling.
_turn = [-1, 0.0]


def post_request(worker: Any, req: Any, environ: dict[str, Any], resp: Any) -> None:
    """gunicorn hook, after each answer is written: a gevent worker's fair turn, once the
    answers written since the loop last turned have taken a slice. A loop that counts no
    turns (libuv's) steps aside after every answer."""
    gevent_worker = worker.__class__.__module__ == "gunicorn.workers.ggevent"
    sock = environ.get("gunicorn.socket") if environ and gevent_worker else None
    if sock is not None and sock.timeout is not None:
        # The answer is out: its writes' bound (SEND_TIMEOUT_SECONDS, service.limits) off
        # again, so that the wait for a keep-alive connection's next request is gunicorn's.
        sock.settimeout(None)
    if fair_turns and gevent_worker:
        import gevent  # only a gevent worker has gevent's hub to yield to

        turn, now = getattr(gevent.get_hub().loop, "iteration", None), time.monotonic()
        if turn is not None and turn != _turn[0]:
            _turn[:] = turn, now  # a new turn of the loop: its slice starts
        elif turn is None or now - _turn[1] >= SLICE_SECONDS:
            gevent.sleep(TURN_SECONDS)
