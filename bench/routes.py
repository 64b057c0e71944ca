"""The stateless routes' own cost, in process: `python -m bench.routes [--requests 300]`.

Calls the service's WSGI app and the bare echo's (bench/echo.py) directly, with no server
and no network, on the corpus of bench.http (both games, legal-moves and apply), in slices
taken in turn and timed in CPU seconds of this process; prints the CPU time of one request
to each and the service's share over the echo's. The HTTP ratios of bench.http add the
server's own cost (gunicorn, gevent, sockets, the access log) to both sides; this is the
part of it that the app decides, with far less noise on a busy machine.
"""

import argparse
import io
import statistics
import sys
import time
from collections.abc import Callable

import orjson

from bench.echo import app as echo_app
from bench.http import ENDPOINTS, corpus
from engine.game import games
from service import create_app

SLICES = 15


def environ(path: str, body: bytes) -> dict:
    return {
        "REQUEST_METHOD": "POST", "PATH_INFO": path, "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr,
        "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
    }  # fmt: skip


def answered(status: str, headers: list, exc_info: object = None) -> None:
    if not status.startswith("200"):
        raise RuntimeError(f"answered {status}")


def cpu_per_request(app: Callable, path: str, bodies: list[bytes], count: int) -> float:
    started = time.process_time()
    for index in range(count):
        b"".join(app(environ(path, bodies[index % len(bodies)]), answered))
    return (time.process_time() - started) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="per slice")
    parser.add_argument("--corpus", type=int, default=100, help="distinct states per game")
    args = parser.parse_args()
    service = create_app({"REDIS_URL": None}).wsgi_app
    runs = {}
    for name in sorted(games()):
        pairs = corpus(name, args.corpus)
        bodies = {
            "legal-moves": [orjson.dumps({"state": state}) for state, _ in pairs],
            "apply": [orjson.dumps({"state": state, "move": move}) for state, move in pairs],
        }
        for endpoint in ENDPOINTS:
            runs[name, endpoint] = (f"/v1/games/{name}/{endpoint}", bodies[endpoint])
    times: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(SLICES):
        for (name, endpoint), (path, bodies) in runs.items():
            for who, app, where in (("service", service, path), ("echo", echo_app, "/echo")):
                spent = cpu_per_request(app, where, bodies, args.requests)
                times.setdefault((name, endpoint, who), []).append(spent)
    print(f"CPU per request in process (median of {SLICES} slices of {args.requests}):")
    print(f"  {'route':<22}{'service':>10}{'echo':>10}{'ratio':>8}")
    for name, endpoint in runs:
        served = statistics.median(times[name, endpoint, "service"]) * 1e6
        echoed = statistics.median(times[name, endpoint, "echo"]) * 1e6
        route = f"{name} {endpoint}"
        print(f"  {route:<22}{served:>8.0f}us{echoed:>8.0f}us{served / echoed:>8.2f}")


if __name__ == "__main__":
    main()
