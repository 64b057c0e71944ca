"""HTTP throughput of the stateless API against its own floor, in one run.

    python -m bench.http [--seconds 5] [--connections 8]

Starts gunicorn with the production gunicorn.conf.py on a free port (BENCH_ECHO=1 adds
POST /bench/echo, which only parses the body the same way and writes it back with orjson),
builds a corpus of realistic states from seeded random games, warms up, then measures
requests/s and p50/p99 latency of legal-moves, apply and the echo of the very same bodies
with a closed-loop client (one keep-alive connection per thread), in half-second
slices taken in turn. It ends with the cost of
checking a full state: the game's reader against a deep marshmallow schema.
"""

import argparse
import http.client
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import timeit
from dataclasses import dataclass
from pathlib import Path

import orjson

from engine.game import get_game
from service.schemas import ApplyRequest, BasraStateSchema, StateRequest

ROOT = Path(__file__).resolve().parents[1]
TARGET = 0.6  # legal-moves must reach this share of the echo floor
SLICE_SECONDS = 0.5


@dataclass
class Result:
    name: str
    requests: int
    seconds: float
    latencies: list[float]
    failures: int

    @property
    def rate(self) -> float:
        return self.requests / self.seconds

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_gunicorn(port: int, log: Path) -> subprocess.Popen:
    env = {**os.environ, "PORT": str(port), "HOST": "127.0.0.1", "BENCH_ECHO": "1"}
    gunicorn = Path(sys.executable).with_name("gunicorn")
    with log.open("w") as out:
        server = subprocess.Popen(
            [str(gunicorn), "-c", "gunicorn.conf.py"], cwd=ROOT, env=env, stdout=out, stderr=out
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited; see {log}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            connection.request("GET", "/livez")
            if connection.getresponse().status == 200:
                connection.close()
                return server
        except OSError:
            time.sleep(0.1)
    server.terminate()
    raise TimeoutError("gunicorn did not come up")


def hammer(port: int, path: str, bodies: list[bytes], seconds: float, connections: int) -> Result:
    """Closed loop: each thread sends its next body as soon as the previous answer is read."""
    stop = time.perf_counter() + seconds
    latencies: list[list[float]] = [[] for _ in range(connections)]
    failures = [0] * connections
    headers = {"Content-Type": "application/json"}

    def client(index: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine, failed = latencies[index], 0
        turn = index
        while (start := time.perf_counter()) < stop:
            connection.request("POST", path, bodies[turn % len(bodies)], headers)
            response = connection.getresponse()
            response.read()
            mine.append(time.perf_counter() - start)
            failed += response.status != 200
            turn += connections
        failures[index] = failed
        connection.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(connections)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    every = [latency for mine in latencies for latency in mine]
    return Result(path, len(every), elapsed, every, sum(failures))


def interleaved(
    port: int, runs: list[tuple[str, str, list[bytes]]], seconds: float, connections: int
) -> list[Result]:
    """Every endpoint in short slices taken in turn, so a load that comes and goes on the
    machine weighs on an endpoint and on its floor alike."""
    slices = max(1, round(seconds / SLICE_SECONDS))
    parts: list[list[Result]] = [[] for _ in runs]
    for _ in range(slices):
        for part, (_, path, bodies) in zip(parts, runs):
            part.append(hammer(port, path, bodies, seconds / slices, connections))
    return [
        Result(
            name=name,
            requests=sum(result.requests for result in part),
            seconds=sum(result.seconds for result in part),
            latencies=[latency for result in part for latency in result.latencies],
            failures=sum(result.failures for result in part),
        )
        for part, (name, _, _) in zip(parts, runs)
    ]


def state_check_cost(pairs: list[tuple[dict, dict]]) -> list[tuple[str, float]]:
    """Microseconds per full state: raw envelope, the game's reader, a deep marshmallow load."""
    game, states = get_game("basra"), [state for state, _ in pairs[:50]]
    envelope, deep = StateRequest(), BasraStateSchema()
    checks = {
        "marshmallow envelope, state raw": lambda: [envelope.load({"state": s}) for s in states],
        "game.read (the deep check used)": lambda: [game.read(s) for s in states],
        "marshmallow deep BasraStateSchema": lambda: [deep.load(s) for s in states],
    }
    return [
        (name, min(timeit.repeat(check, number=20, repeat=3)) / (20 * len(states)) * 1e6)
        for name, check in checks.items()
    ]


def report(results: list[Result]) -> None:
    print(f"{'endpoint':<30}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'failed':>8}")
    for result in results:
        print(
            f"{result.name:<30}{result.rate:>10.0f}{result.percentile(0.5):>10.2f}"
            f"{result.percentile(0.99):>10.2f}{result.failures:>8}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per endpoint")
    parser.add_argument("--warmup", type=float, default=1.0, help="per endpoint")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--corpus", type=int, default=300, help="distinct states")
    args = parser.parse_args()

    pairs = corpus(args.corpus)
    legal_bodies = [orjson.dumps({"state": state}) for state, _ in pairs]
    apply_bodies = [orjson.dumps({"state": state, "move": move}) for state, move in pairs]
    ApplyRequest().load(orjson.loads(apply_bodies[0]))  # the corpus speaks the API
    print(f"corpus: {len(pairs)} states, mean body {statistics.mean(map(len, apply_bodies)):.0f} B")

    port = free_port()
    with tempfile.TemporaryDirectory() as scratch:
        server = start_gunicorn(port, Path(scratch) / "gunicorn.log")
        try:
            runs = [
                ("legal-moves", "/v1/games/basra/legal-moves", legal_bodies),
                ("echo of legal-moves bodies", "/bench/echo", legal_bodies),
                ("apply", "/v1/games/basra/apply", apply_bodies),
                ("echo of apply bodies", "/bench/echo", apply_bodies),
            ]
            for _, path, bodies in runs:
                hammer(port, path, bodies, args.warmup, args.connections)
            results = interleaved(port, runs, args.seconds, args.connections)
        finally:
            server.terminate()
            server.wait(timeout=15)

    print(f"\n{args.connections} connections, {args.seconds:g} s each after {args.warmup:g} s "
          "warm-up, production gunicorn.conf.py")  # fmt: skip
    report(results)
    legal, legal_echo, apply, apply_echo = results
    ratio = legal.rate / legal_echo.rate
    print(f"\nlegal-moves / echo = {ratio:.2f} (target >= {TARGET})")
    print(f"apply / echo       = {apply.rate / apply_echo.rate:.2f}")
    print("\nchecking one full state, in process:")
    for name, micros in state_check_cost(pairs):
        print(f"  {name:<36}{micros:>8.1f} us")
    if any(result.failures for result in results):
        sys.exit("some requests failed")


if __name__ == "__main__":
    main()
