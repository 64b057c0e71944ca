"""Worker models side by side: `python -m bench.workers [--seconds 3] [--connections 16 64]`.

Starts one gunicorn per worker model at once, each with the production gunicorn.conf.py on
its own port, and beside each its own floor: bench/echo.py in that model's worker shape
(see bench.http). Then wrk loads Basra's legal-moves and apply, and the echo of the same
bodies, on every server in one-second slices taken in turn, so a load that comes and goes
on the machine weighs on every model alike (only the server being measured is busy). One
row per model and connection count: each endpoint's throughput and p99 against its own
echo's, and the echo's own figures.

Models: gevent as it was (GUNICORN_FAIR_TURNS=0), gevent with fair turns (production),
gthread with 8 and with 128 threads, and gevent with fair turns in two workers sharing
Redis (what REDIS_URL selects). gthread cannot hold 64 waiting long polls with 8 threads:
that one is here for the stateless paths only. `--before DIR` adds the production config of
another checkout (say `git archive <commit> | tar -x -C DIR`), served from there beside the
current one's echo: the code before a change and after it, side by side in one run.
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

from bench.http import corpus, echo_server, worker_shape
from bench.wrk import Load, body_file, post
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
def gunicorn_in(root: Path, log: Path, **settings: str) -> Iterator[str]:
    """gunicorn -c gunicorn.conf.py of another checkout, serving that checkout's code on a
    free port, once /livez answers; yields its URL."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    env.update(HOST="127.0.0.1", PORT=str(port), **settings)
    gunicorn_bin = Path(sys.executable).with_name("gunicorn")
    with log.open("w") as out:
        server = subprocess.Popen([str(gunicorn_bin), "-c", "gunicorn.conf.py"],
                                  cwd=root, env=env, stdout=out, stderr=out)  # fmt: skip
    try:
        wait_until(port, "/livez", server, 30.0)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=3, help="per endpoint and model")
    parser.add_argument("--connections", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--corpus", type=int, default=300, help="distinct states")
    parser.add_argument("--before", type=Path, help="another checkout to serve beside")
    parser.add_argument("--only", nargs="+", choices=list(MODELS), help="models to run")
    args = parser.parse_args()

    pairs = corpus("basra", args.corpus)
    with tempfile.TemporaryDirectory() as scratch, ExitStack() as stack:
        directory = Path(scratch)
        files = {
            "legal": body_file(directory / "legal.jsonl",
                               [orjson.dumps({"state": s}) for s, _ in pairs]),
            "apply": body_file(directory / "apply.jsonl",
                               [orjson.dumps({"state": s, "move": m}) for s, m in pairs]),
        }  # fmt: skip
        redis = stack.enter_context(RedisServer(directory / "redis"))
        servers = {}  # name -> (service URL, echo URL)
        models = {name: MODELS[name] for name in args.only or MODELS}
        for number, (name, (options, settings)) in enumerate(models.items()):
            env = {**settings, "LOG_LEVEL": "warning"}
            if "REDIS_URL" in env:
                env["REDIS_URL"] = redis.url
            own = directory / f"model-{number}"
            own.mkdir()
            service = stack.enter_context(gunicorn(own / "service.log", *options, **env))
            shape = worker_shape(list(options), env)
            servers[name] = (service.url, stack.enter_context(echo_server(own, shape)).url)
        if args.before:
            before = directory / "before"
            before.mkdir()
            url = stack.enter_context(
                gunicorn_in(args.before, before / "service.log", LOG_LEVEL="warning")
            )
            servers[f"before: {args.before.name}"] = (url, servers["gevent, fair turns"][1])
        rows = []
        for count in args.connections:
            runs = []
            for name, (service, echo) in servers.items():
                for kind, path in (("legal", "/v1/games/basra/legal-moves"),
                                   ("apply", "/v1/games/basra/apply")):  # fmt: skip
                    runs.append((Load(f"{name}|{kind}"), service, path, files[kind]))
                    runs.append((Load(f"{name}|{kind} echo"), echo, "/echo", files[kind]))
            for _, url, path, file in runs:
                post(Load("warm-up"), url, path, file, count, 1)
            for _ in range(args.seconds):
                for load, url, path, file in runs:
                    post(load, url, path, file, count, 1)
            for index, name in enumerate(servers):
                rows.append((name, count, *(load for load, *_ in runs[4 * index : 4 * index + 4])))
    print(f"\nworker models, {args.seconds} s per endpoint and model in one-second slices "
          "taken in turn (wrk); ratios to the model's own echo")  # fmt: skip
    print(f"{'model':<32}{'conns':>6}{'legal/echo':>12}{'p99 ratio':>10}{'apply/echo':>12}"
          f"{'p99 ratio':>10}{'echo req/s':>11}{'echo p99':>10}")  # fmt: skip
    for name, count, legal, legal_echo, apply, apply_echo in rows:
        print(
            f"{name:<32}{count:>6}{legal.rate / legal_echo.rate:>12.2f}"
            f"{legal.percentile(0.99) / legal_echo.percentile(0.99):>10.2f}"
            f"{apply.rate / apply_echo.rate:>12.2f}"
            f"{apply.percentile(0.99) / apply_echo.percentile(0.99):>10.2f}"
            f"{legal_echo.rate:>11.0f}{legal_echo.percentile(0.99):>10.1f}"
        )


if __name__ == "__main__":
    main()
