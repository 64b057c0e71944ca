"""HTTP throughput and tail latency of the stateless API against a bare echo, in one run.

    python -m bench.http [--seconds 3] [--connections 16 64] [-- gunicorn options]

Starts two gunicorns on free ports: the service with the production gunicorn.conf.py (and
any options after `--`, e.g. `-- -k gthread --threads 8`), and its floor, bench/echo.py, a
bare Flask app that parses each body with orjson and writes it back and does nothing else,
in the service's worker shape (worker class, threads, worker connections, workers and
keep-alive, as gunicorn resolves them from gunicorn.conf.py and those options). Builds a
corpus of positions of every game from seeded random matches, warms up, then loads each
game's legal-moves and apply, and the echo with the very same bodies, from wrk at each
connection count, in one-second slices (wrk counts whole seconds) taken in turn (the
service, then the echo, then the next endpoint), so a load that comes and goes on the
machine weighs on each alike. Targets:
each >= 0.75 x the echo's requests/s and p99 <= 3 x the echo's p99, at the same load. It
ends with the cost of checking a full state: the game's reader against a deep JSON Schema
check.
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import jsonschema_rs
import orjson

from bench.report import Target, print_targets
from bench.wrk import Load, body_file, post
from engine.game import games, get_game
from service.schemas.derived import standalone
from service.schemas.envelopes import envelopes_of
from tests.gunicorn_server import GUNICORN, ROOT, Gunicorn, gunicorn

THROUGHPUT_GOAL = 0.75  # each endpoint's share of the echo floor's requests/s
P99_GOAL = 3.0  # each endpoint's p99 latency against the echo's, at the same load
ENDPOINTS = ("legal-moves", "apply")
# How long a gunicorn may take to answer its first request: on a loaded machine, importing
# the service alone can take half a minute.
STARTUP_SECONDS = 120.0
# What makes a gunicorn's worker shape: the echo is served with the service's own.
SHAPE = ("worker_class", "threads", "worker_connections", "workers", "keepalive")


def corpus(name: str, size: int, seed: int = 7) -> list[tuple[dict, dict]]:
    """(state, legal move) pairs of the game `name` from seeded random matches of each of
    its presets, fewest seats, spread over whole rounds or deals."""
    game, rng = get_game(name), random.Random(seed)
    catalogue = game.catalogue()
    presets, seats = sorted(catalogue["presets"]), min(catalogue["seats"])
    pairs: list[tuple[dict, dict]] = []
    match = 0
    while len(pairs) < size:
        state = game.new({"preset": rng.choice(presets)}, seats, f"bench-{match}")
        match += 1
        for _ in range(rng.randint(0, 150)):
            moves = game.legal_moves(state)
            if not moves:
                break
            state, _ = game.apply(state, rng.choice(moves))
        moves = game.legal_moves(state)
        if moves:
            pairs.append((game.write(state), game.write_move(state, rng.choice(moves))))
    return pairs


def worker_shape(options: list[str], settings: dict[str, str]) -> dict[str, str | int]:
    """The worker shape gunicorn resolves from gunicorn.conf.py, these options and these
    environment settings (`gunicorn --print-config`)."""
    with tempfile.TemporaryDirectory() as metrics:
        env = {**os.environ, **settings, "PROMETHEUS_MULTIPROC_DIR": metrics}
        printed = subprocess.run(
            [str(GUNICORN), "-c", "gunicorn.conf.py", *options, "--print-config"],
            cwd=ROOT, env=env, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    resolved = {}
    for line in printed.splitlines():
        name, equals, value = line.partition("=")
        if equals:
            resolved[name.strip()] = value.strip()
    return {
        name: resolved[name] if name == "worker_class" else int(resolved[name]) for name in SHAPE
    }


@contextmanager
def echo_server(directory: Path, shape: dict[str, str | int]) -> Iterator[Gunicorn]:
    """bench/echo.py under gunicorn in `shape` and gunicorn's defaults otherwise (no
    access log, no hooks), on a free port."""
    config = directory / "echo.conf.py"
    config.write_text("".join(f"{name} = {value!r}\n" for name, value in shape.items()))
    with gunicorn(
        directory / "echo.log", "bench.echo:app", config=str(config), within=STARTUP_SECONDS
    ) as server:
        yield server


def report(loads: list[Load]) -> None:
    print(f"{'load':<30}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'requests':>10}{'failed':>8}")
    for load in loads:
        print(
            f"{load.name:<30}{load.rate:>10.0f}{load.percentile(0.5):>10.2f}"
            f"{load.percentile(0.99):>10.2f}{load.requests:>10}{load.failures:>8}"
        )


def endpoint_targets(connections: int, served: Load, echo: Load) -> list[Target]:
    """Throughput and p99 of one endpoint against the echo of its own bodies."""
    floor = f"echo, {connections} conns"
    return [
        Target(f"http {served.name} @{connections} req/s", served.rate, "req/s", echo.rate,
               floor, THROUGHPUT_GOAL),
        Target(f"http {served.name} @{connections} p99", served.percentile(0.99), "ms",
               echo.percentile(0.99), floor, P99_GOAL, higher=False),
    ]  # fmt: skip


def state_check_cost(pairs: list[tuple[dict, dict]]) -> list[tuple[str, float]]:
    """Microseconds per full state: raw envelope, the game's reader, a deep JSON Schema
    validation against the game's declared state (jsonschema-rs)."""
    game, states = get_game("basra"), [state for state, _ in pairs[:50]]
    envelope = envelopes_of("basra").state()
    deep = jsonschema_rs.validator_for(standalone(game, game.shapes.state))
    checks = {
        "marshmallow envelope, state raw": lambda: [envelope.load({"state": s}) for s in states],
        "game.read (the deep check used)": lambda: [game.read(s) for s in states],
        "deep JSON Schema of BasraState": lambda: [deep.validate(s) for s in states],
    }
    return [
        (name, min(timeit.repeat(check, number=20, repeat=3)) / (20 * len(states)) * 1e6)
        for name, check in checks.items()
    ]


def measure(
    seconds: int, warmup: int, connections: list[int], size: int, options: list[str]
) -> list[Target]:
    """Print the HTTP figures and return the targets, for each game, endpoint and
    connection count."""
    # A REDIS_URL in the shell reaches gunicorn, as it always has: the worker count follows it.
    redis = {"REDIS_URL": os.environ["REDIS_URL"]} if "REDIS_URL" in os.environ else {}
    pairs = {name: corpus(name, size) for name in sorted(games())}
    shape = worker_shape(options, redis)
    targets, failures = [], 0
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        bodies = {}
        for name, found in pairs.items():
            bodies[name, "legal-moves"] = [orjson.dumps({"state": state}) for state, _ in found]
            bodies[name, "apply"] = [orjson.dumps({"state": s, "move": m}) for s, m in found]
        files = {
            key: body_file(directory / f"{key[0]}-{key[1]}.jsonl", lines)
            for key, lines in bodies.items()
        }
        with (
            gunicorn(
                directory / "service.log", *options, within=STARTUP_SECONDS, **redis
            ) as service,
            echo_server(directory, shape) as echo,
        ):
            print(f"service: gunicorn.conf.py {' '.join(options)}; echo: the same shape, "
                  + ", ".join(f"{name} {value}" for name, value in shape.items()))  # fmt: skip
            for count in connections:
                runs = []
                for (name, endpoint), file in files.items():
                    runs.append((Load(f"{name} {endpoint}"), service.url,
                                 f"/v1/games/{name}/{endpoint}", file))  # fmt: skip
                    runs.append((Load(f"echo of {name} {endpoint}"), echo.url, "/echo", file))
                for _, url, path, file in runs:
                    post(Load("warm-up"), url, path, file, count, warmup)
                for _ in range(seconds):
                    for load, url, path, file in runs:
                        post(load, url, path, file, count, 1)
                print(f"\n{count} connections (wrk), {seconds} s each in one-second slices "
                      f"taken in turn, after {warmup} s warm-up")  # fmt: skip
                loads = [load for load, *_ in runs]
                report(loads)
                for served, echoed in zip(loads[::2], loads[1::2]):
                    targets += endpoint_targets(count, served, echoed)
                failures += sum(load.failures for load in loads)
    print("\nchecking one full Basra state, in process:")
    for name, micros in state_check_cost(pairs["basra"]):
        print(f"  {name:<36}{micros:>8.1f} us")
    if failures:
        sys.exit(f"{failures} requests failed")
    return targets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=3, help="per endpoint and server")
    parser.add_argument("--warmup", type=int, default=1, help="per endpoint and server")
    parser.add_argument("--connections", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--corpus", type=int, default=300, help="distinct states per game")
    parser.add_argument("gunicorn", nargs="*", help="options for gunicorn, after --")
    args = parser.parse_args()
    targets = measure(args.seconds, args.warmup, args.connections, args.corpus, args.gunicorn)
    print_targets(targets, "http targets")


if __name__ == "__main__":
    main()
