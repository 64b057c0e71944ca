"""HTTP throughput and tail latency of the stateless API against its own floor, in one run.

    python -m bench.http [--seconds 5] [--connections 16 64] [-- gunicorn options]

Starts gunicorn with the production gunicorn.conf.py on a free port (BENCH_ECHO=1 adds
POST /bench/echo, which only parses the body the same way and writes it back with orjson;
options after `--` go to gunicorn, e.g. `-- -k gthread --threads 8` to compare worker
models), builds a corpus of realistic states from seeded random games, warms up, then
measures requests/s and p50/p99 latency of legal-moves, apply and the echo of the very
same bodies with a closed-loop client (one keep-alive connection per thread), at each
connection count, in half-second slices taken in turn. Targets: each endpoint >= 0.75 x
the echo's throughput and p99 <= 3 x the echo's p99 at the same load. It ends with the
cost of checking a full state: the game's reader against a deep JSON Schema check.
"""

import argparse
import http.client
import os
import random
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path

import jsonschema_rs
import orjson

from bench.harness import JSON, Load, Result, closed_loop, in_turn, post, report
from bench.report import Target, print_targets
from engine.game import get_game
from service.schemas.derived import standalone
from service.schemas.envelopes import envelopes_of
from tests.gunicorn_server import gunicorn

THROUGHPUT_GOAL = 0.75  # each endpoint's share of the echo floor's requests/s
P99_GOAL = 3.0  # each endpoint's p99 latency against the echo's, at the same load
SLICE_SECONDS = 0.5


def corpus(size: int, seed: int = 7) -> list[tuple[dict, dict]]:
    """(state, legal move) pairs from seeded random matches, spread over whole rounds."""
    game, rng = get_game("basra"), random.Random(seed)
    pairs: list[tuple[dict, dict]] = []
    match = 0
    while len(pairs) < size:
        state = game.new({"preset": rng.choice(["levantine", "egyptian"])}, 2, f"bench-{match}")
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


class Poster:
    """One keep-alive connection posting the bodies in turn, from its own offset on."""

    def __init__(self, port: int, path: str, bodies: list[bytes], first: int, step: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.path, self.bodies = path, bodies
        self.turn, self.step = first, step

    def __call__(self) -> tuple[float, bool]:
        started = time.perf_counter()
        body = self.bodies[self.turn % len(self.bodies)]
        status, _ = post(self.connection, self.path, body, JSON)
        self.turn += self.step
        return time.perf_counter() - started, status == 200


def hammer(port: int, path: str, bodies: list[bytes], connections: int) -> Load:
    """`connections` fresh keep-alive clients posting the bodies to `path`, together."""

    def load(seconds: float, result: Result) -> Result:
        posters = [Poster(port, path, bodies, i, connections) for i in range(connections)]
        try:
            return closed_loop(posters, seconds, result)
        finally:
            for poster in posters:
                poster.connection.close()

    return load


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


def endpoint_targets(connections: int, results: list[Result]) -> list[Target]:
    """Throughput and p99 of legal-moves and apply against the echo of their own bodies."""
    legal, legal_echo, apply, apply_echo = results
    targets = []
    for name, endpoint, echo in (("legal-moves", legal, legal_echo), ("apply", apply, apply_echo)):
        floor = f"echo, {connections} conns"
        targets += [
            Target(f"http {name} @{connections} req/s", endpoint.rate, "req/s", echo.rate,
                   floor, THROUGHPUT_GOAL),
            Target(f"http {name} @{connections} p99", endpoint.percentile(0.99), "ms",
                   echo.percentile(0.99), floor, P99_GOAL, higher=False),
        ]  # fmt: skip
    return targets


def measure(
    seconds: float, warmup: float, connections: list[int], size: int, options: list[str]
) -> list[Target]:
    """Print the HTTP figures and return the targets, for each connection count."""
    pairs = corpus(size)
    legal_bodies = [orjson.dumps({"state": state}) for state, _ in pairs]
    apply_bodies = [orjson.dumps({"state": state, "move": move}) for state, move in pairs]
    envelopes_of("basra").apply().load(orjson.loads(apply_bodies[0]))  # the corpus speaks the API
    print(f"corpus: {len(pairs)} states, mean body {statistics.mean(map(len, apply_bodies)):.0f} B")

    # A REDIS_URL in the shell reaches gunicorn, as it always has: the worker count follows it.
    redis = {"REDIS_URL": os.environ["REDIS_URL"]} if "REDIS_URL" in os.environ else {}
    targets, failures = [], 0
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "gunicorn.log"
        with gunicorn(log, *options, BENCH_ECHO="1", **redis) as server:
            for count in connections:
                runs = [
                    ("legal-moves", "/v1/games/basra/legal-moves", legal_bodies),
                    ("echo of legal-moves bodies", "/bench/echo", legal_bodies),
                    ("apply", "/v1/games/basra/apply", apply_bodies),
                    ("echo of apply bodies", "/bench/echo", apply_bodies),
                ]
                loads = [
                    (name, hammer(server.port, path, bodies, count)) for name, path, bodies in runs
                ]
                in_turn(loads, warmup, 1)  # the warm-up, not reported
                results = in_turn(loads, seconds, max(1, round(seconds / SLICE_SECONDS)))
                print(f"\n{count} connections, {seconds:g} s each after {warmup:g} s warm-up, "
                      f"gunicorn.conf.py {' '.join(options)}")  # fmt: skip
                report(results, "endpoint", 30, "req/s")
                targets += endpoint_targets(count, results)
                failures += sum(result.failures for result in results)
    print("\nchecking one full state, in process:")
    for name, micros in state_check_cost(pairs):
        print(f"  {name:<36}{micros:>8.1f} us")
    if failures:
        sys.exit(f"{failures} requests failed")
    return targets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per endpoint")
    parser.add_argument("--warmup", type=float, default=1.0, help="per endpoint")
    parser.add_argument("--connections", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--corpus", type=int, default=300, help="distinct states")
    parser.add_argument("gunicorn", nargs="*", help="options for gunicorn, after --")
    args = parser.parse_args()
    targets = measure(args.seconds, args.warmup, args.connections, args.corpus, args.gunicorn)
    print_targets(targets, "http targets")


if __name__ == "__main__":
    main()
