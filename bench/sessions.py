"""Hosted move throughput on gunicorn + Redis next to stateless apply, in one run.

    python -m bench.sessions [--seconds 10] [--windows 10] [--games 16]

Starts its own throwaway redis-server and gunicorn with the production gunicorn.conf.py and
REDIS_URL pointing at it. Every client thread plays its own human-vs-human session: the
seat to move posts its move with its token on its own keep-alive connection. The moves of
each seeded match are worked out beforehand with the engine, so the clients spend no CPU
choosing them while measuring. The same threads post the very same positions to the
stateless `apply` (whole state in, whole state out), in windows alternating with the hosted
ones so that a change in the machine's load weighs on both alike. It prints moves/s and
p50/p99 latency of both, and their ratio; the target is hosted >= 0.6 x stateless, and
the hosted p99 is reported beside the stateless one.
"""

import argparse
import http.client
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import orjson

from bench.harness import JSON, closed_loop, in_turn, post, report
from bench.report import Target, print_targets
from engine.game import get_game
from tests.gunicorn_server import gunicorn
from tests.redis_server import RedisServer

TARGET = 0.6
RULES = {"preset": "levantine"}


@dataclass
class Match:
    """A seeded match played out in advance: each step's mover, move and state before it."""

    seed: str
    steps: list[tuple[int, dict, dict]]


def play_out(seed: str) -> Match:
    """The match a session with this seed goes through when each seat plays its first
    legal move (what the clients will send)."""
    game = get_game("basra")
    state, steps = game.new(RULES, 2, seed), []
    while (mover := game.to_move(state)) is not None:
        move = game.legal_moves(state)[0]
        steps.append((mover, game.write_move(state, move), game.write(state)))
        state, _ = game.apply(state, move)
    return Match(seed, steps)


class Player:
    """One client thread's games: a new session per match; each seat has its own
    keep-alive connection, as two players would, and the seat to move posts."""

    def __init__(self, port: int, matches: list[Match]) -> None:
        self.connections = [
            http.client.HTTPConnection("127.0.0.1", port, timeout=60) for _ in range(2)
        ]
        self.matches = matches
        self.next_match = 0
        self.step = 0
        self.session = ""
        self.tokens: list[dict] = []
        self._start()
        # The stateless client walks the same matches with a cursor of its own.
        self.position = 0
        self.positions = [step for match in matches for step in match.steps]

    def _start(self) -> None:
        match = self.matches[self.next_match % len(self.matches)]
        self.next_match += 1
        body = {"game": "basra", "rules": RULES, "seed": match.seed,
                "seats": [{"type": "human"}, {"type": "human"}]}  # fmt: skip
        status, answer = post(self.connections[0], "/v1/sessions", orjson.dumps(body), JSON)
        if status != 201:
            raise RuntimeError(f"creating a session: {status} {answer[:200]!r}")
        created = orjson.loads(answer)
        self.session, self.step, self.match = created["id"], 0, match
        self.tokens = [
            {**JSON, "Authorization": f"Bearer {seat['token']}"} for seat in created["seats"]
        ]

    def hosted_move(self) -> tuple[float, bool]:
        """One move posted and timed; a finished match starts the next one (untimed)."""
        if self.step == len(self.match.steps):
            self._start()
        mover, move, _ = self.match.steps[self.step]
        body = orjson.dumps({"move": move, "version": self.step})
        path = f"/v1/sessions/{self.session}/moves"
        started = time.perf_counter()
        status, _ = post(self.connections[mover], path, body, self.tokens[mover])
        elapsed = time.perf_counter() - started
        self.step += 1
        return elapsed, status == 200

    def stateless_apply(self) -> tuple[float, bool]:
        mover, move, state = self.positions[self.position % len(self.positions)]
        body = orjson.dumps({"state": state, "move": move})
        started = time.perf_counter()
        status, _ = post(self.connections[mover], "/v1/games/basra/apply", body, JSON)
        self.position += 1
        return time.perf_counter() - started, status == 200


def measure(seconds: float, windows: int, warmup: float, games: int, matches: int) -> list[Target]:
    """Print hosted and stateless figures; return the hosted throughput and p99 targets."""
    schedules = [[play_out(f"bench-{game}-{n}") for n in range(matches)] for game in range(games)]
    moves = sum(len(match.steps) for matches in schedules for match in matches)
    print(f"{games} games, {moves} moves worked out in advance")
    with tempfile.TemporaryDirectory() as scratch, RedisServer(Path(scratch) / "redis") as redis:
        log = Path(scratch) / "gunicorn.log"
        options = ("--access-logfile", "/dev/null")
        # The clients' moves are worked out beforehand from the sessions' seeds.
        settings = {"REDIS_URL": redis.url, "LOG_LEVEL": "warning", "CLIENT_SEEDS": "true"}
        with gunicorn(log, *options, ready="/readyz", **settings) as server:
            players = [Player(server.port, matches) for matches in schedules]
            loads = [
                ("hosted move", partial(closed_loop, [p.hosted_move for p in players])),
                ("stateless apply", partial(closed_loop, [p.stateless_apply for p in players])),
            ]
            in_turn(loads, warmup, 1)  # the warm-up, not reported
            hosted, stateless = in_turn(loads, seconds, windows)
    workers = os.environ.get("WEB_CONCURRENCY", os.cpu_count())
    print(f"\ngunicorn.conf.py ({workers} workers) + Redis, {games} client threads, "
          f"{seconds:g} s each in {windows} alternating windows, "
          f"after {warmup:g} s warm-up")  # fmt: skip
    report([hosted, stateless], "", 22, "moves/s", count="moves")
    print(f"\nhosted / stateless = {hosted.rate / stateless.rate:.2f} (target >= {TARGET})")
    if hosted.failures or stateless.failures:
        sys.exit("some requests failed")
    floor = f"stateless apply, {games} conns"
    return [
        Target("hosted move req/s", hosted.rate, "req/s", stateless.rate, floor, TARGET),
        Target("hosted move p99", hosted.percentile(0.99), "ms",
               stateless.percentile(0.99), floor, None, higher=False),
    ]  # fmt: skip


def hosted_arguments(description: str) -> argparse.Namespace:
    """The options of every hosted-moves benchmark."""
    parser = argparse.ArgumentParser(description=description.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per measurement")
    parser.add_argument("--windows", type=int, default=10, help="alternations of the two")
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--games", type=int, default=16, help="concurrent games (threads)")
    parser.add_argument("--matches", type=int, default=4, help="seeded matches per thread")
    return parser.parse_args()


def compare_hosted(servers: dict, args: argparse.Namespace, what: str) -> None:
    """Hosted moves on two servers (name -> running gunicorn) in alternating windows after a
    warm-up; prints moves/s and p50/p99 of both and the second's ratio to the first."""
    schedules = [
        [play_out(f"bench-{game}-{n}") for n in range(args.matches)] for game in range(args.games)
    ]
    loads = []
    for name, server in servers.items():
        players = [Player(server.port, matches) for matches in schedules]
        loads.append((name, partial(closed_loop, [p.hosted_move for p in players])))
    in_turn(loads, args.warmup, 1)  # the warm-up, not reported
    first, second = in_turn(loads, args.seconds, args.windows)
    workers = os.environ.get("WEB_CONCURRENCY", os.cpu_count())
    print(f"\nhosted moves, gunicorn.conf.py ({workers} workers) each, {args.games} client "
          f"threads, {args.seconds:g} s each in {args.windows} alternating windows, "
          f"after {args.warmup:g} s warm-up")  # fmt: skip
    report([first, second], "", 24, "moves/s", count="moves")
    print(f"\n{what} = {second.rate / first.rate:.2f} (moves/s), "
          f"p99 {second.percentile(0.99) / first.percentile(0.99):.2f}x")  # fmt: skip
    if first.failures or second.failures:
        sys.exit("some requests failed")


def main() -> None:
    args = hosted_arguments(__doc__)
    targets = measure(args.seconds, args.windows, args.warmup, args.games, args.matches)
    print_targets(targets, "hosted session targets")


if __name__ == "__main__":
    main()
