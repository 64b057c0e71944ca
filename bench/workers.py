"""Worker models side by side: `python -m bench.workers [--seconds 4] [--connections 16 64]`.

Starts one gunicorn per worker model at once, each with the production gunicorn.conf.py
and BENCH_ECHO=1 on its own port, then measures legal-moves, apply and the echo of the
same bodies on every server in half-second slices taken in turn, so a load that comes
and goes on the machine weighs on every model alike (only the server being measured is
busy). One row per model and connection count: each endpoint's throughput and p99 against
that server's own echo, and the spread of requests answered per connection (the most
over the fewest in a slice; fair scheduling keeps it near 1).

Models: gevent as it was (GUNICORN_FAIR_TURNS=0), gevent with fair turns (production),
gthread with 8 and with 128 threads, and gevent with fair turns in two workers sharing
Redis (what REDIS_URL selects). gthread cannot hold 64 waiting long polls with 8 threads:
that one is here for the stateless paths only. `--before DIR` adds the production config of another
checkout (say `git archive <commit> | tar -x -C DIR`), served from there: the code
before a change and after it, side by side in one run.
"""

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import orjson

from bench.harness import in_turn
from bench.http import SLICE_SECONDS, corpus, hammer
from tests.gunicorn_server import gunicorn, wait_until
from tests.redis_server import RedisServer, free_port

# name: (gunicorn options, environment settings); "redis" marks a model that needs it.
MODELS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "gevent, as it was": ((), {"GUNICORN_FAIR_TURNS": "0"}),
    "gevent, fair turns": ((), {}),
    "gthread, 8 threads": (("-k", "gthread", "--threads", "8"), {}),
    "gthread, 128 threads": (("-k", "gthread", "--threads", "128"), {}),
    "gevent, fair turns, 2 workers": ((), {"WEB_CONCURRENCY": "2", "REDIS_URL": "redis"}),
}


@contextmanager
def gunicorn_in(root: Path, log: Path, **settings: str) -> Iterator[int]:
    """gunicorn -c gunicorn.conf.py of another checkout, serving that checkout's code on a
    free port (yielded) once /livez answers."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    env.update(HOST="127.0.0.1", PORT=str(port), **settings)
    gunicorn_bin = Path(sys.executable).with_name("gunicorn")
    with log.open("w") as out:
        server = subprocess.Popen([str(gunicorn_bin), "-c", "gunicorn.conf.py"],
                                  cwd=root, env=env, stdout=out, stderr=out)  # fmt: skip
    try:
        wait_until(port, "/livez", server, 30.0)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="per endpoint and model")
    parser.add_argument("--connections", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--corpus", type=int, default=300, help="distinct states")
    parser.add_argument("--before", type=Path, help="another checkout to serve beside")
    parser.add_argument("--only", nargs="+", choices=list(MODELS), help="models to run")
    args = parser.parse_args()

    pairs = corpus(args.corpus)
    legal_bodies = [orjson.dumps({"state": state}) for state, _ in pairs]
    apply_bodies = [orjson.dumps({"state": state, "move": move}) for state, move in pairs]
    with tempfile.TemporaryDirectory() as scratch, ExitStack() as stack:
        redis = stack.enter_context(RedisServer(Path(scratch) / "redis"))
        ports = {}
        if args.before:
            log = Path(scratch) / "gunicorn-before.log"
            ports[f"before: {args.before.name}"] = stack.enter_context(
                gunicorn_in(args.before, log, BENCH_ECHO="1", LOG_LEVEL="warning")
            )
        models = {name: MODELS[name] for name in args.only or MODELS}
        for number, (name, (options, settings)) in enumerate(models.items()):
            env = {**settings, "BENCH_ECHO": "1", "LOG_LEVEL": "warning"}
            if "REDIS_URL" in env:
                env["REDIS_URL"] = redis.url
            log = Path(scratch) / f"gunicorn-{number}.log"
            ports[name] = stack.enter_context(gunicorn(log, *options, **env)).port
        rows = []
        for count in args.connections:
            loads = []
            for name, port in ports.items():
                loads += [
                    (f"{name}|legal", hammer(port, "/v1/games/basra/legal-moves", legal_bodies,
                                             count)),
                    (f"{name}|legal echo", hammer(port, "/bench/echo", legal_bodies, count)),
                    (f"{name}|apply", hammer(port, "/v1/games/basra/apply", apply_bodies, count)),
                    (f"{name}|apply echo", hammer(port, "/bench/echo", apply_bodies, count)),
                ]  # fmt: skip
            in_turn(loads, 0.5, 1)  # the warm-up, not reported
            results = in_turn(loads, args.seconds, max(1, round(args.seconds / SLICE_SECONDS)))
            for index, name in enumerate(ports):
                legal, legal_echo, apply, apply_echo = results[4 * index : 4 * index + 4]
                rows.append((name, count, legal, legal_echo, apply, apply_echo))
    print(f"\nworker models, {args.seconds:g} s per endpoint and model in {SLICE_SECONDS:g} s "
          "slices taken in turn; ratios to the same server's echo")  # fmt: skip
    print(f"{'model':<32}{'conns':>6}{'legal/echo':>12}{'p99 ratio':>10}{'apply/echo':>12}"
          f"{'p99 ratio':>10}{'echo req/s':>11}{'echo p99':>10}{'spread':>8}")  # fmt: skip
    for name, count, legal, legal_echo, apply, apply_echo in rows:
        spread = max(legal.spread, apply.spread)
        print(
            f"{name:<32}{count:>6}{legal.rate / legal_echo.rate:>12.2f}"
            f"{legal.percentile(0.99) / legal_echo.percentile(0.99):>10.2f}"
            f"{apply.rate / apply_echo.rate:>12.2f}"
            f"{apply.percentile(0.99) / apply_echo.percentile(0.99):>10.2f}"
            f"{legal_echo.rate:>11.0f}{legal_echo.percentile(0.99):>10.1f}{spread:>8.1f}"
        )


if __name__ == "__main__":
    main()
