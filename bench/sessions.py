"""Hosted move throughput on gunicorn + Redis next to stateless apply, in one run.

    python -m bench.sessions [--seconds 10] [--connections 16] [--store redis|memory]

Starts its own throwaway redis-server and gunicorn with the production gunicorn.conf.py and
REDIS_URL pointing at it, at the service's own log level with its access log on, as
shipped. The load comes from wrk, as the stateless benchmark's does, so that a client in
Python does not cap both sides: each of its connections (a wrk thread of
its own) plays human-vs-human sessions one after another, each move posted with the
mover's token as soon as the last is answered (bench/play.lua). The sessions are created
beforehand, and their moves worked out with the engine from their seeds, so the client
spends no CPU choosing them. The same connections post positions of the same matches to
the stateless `apply` (whole state in, whole state out), in one-second slices taken in
turn with the hosted ones so that a change in the machine's load weighs on both alike. It
prints moves/s and p50/p99 latency of both and their ratio; the target is hosted >= 0.6 x
stateless, and the hosted p99 is reported beside the stateless one. `--store memory` runs
the service on its in-process store instead (one worker, as gunicorn.conf.py runs it then):
beside a run with `WEB_CONCURRENCY=1` on Redis, it tells what the round trip to Redis adds
to a worker from what the session's own work costs.

`Player` and `compare_hosted` play hosted sessions from Python threads instead, each seat
on a keep-alive connection of its own, for the benchmarks that set one hosted
configuration beside another (bench.cluster, bench.durability, bench.replicas).
"""

import argparse
import bisect
import http.client
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from itertools import count
from pathlib import Path
from typing import Any

import orjson
from werkzeug.test import EnvironBuilder

from bench import wrk
from bench.harness import JSON, closed_loop, cpu_seconds, in_turn, post, report
from bench.http import report as report_loads
from bench.report import Target, print_targets
from engine.game import get_game
from service import create_app
from tests.gunicorn_server import gunicorn
from tests.redis_server import RedisServer

TARGET = 0.6
RULES = {"preset": "levantine"}
# What one connection could play in a one-second slice, at most, before the first slice
# tells: each connection has twice what it played in the last slice in hand.
FIRST_SLICE_MOVES = 600
POSITIONS = 1000  # stateless apply bodies in all, spread over every connection's first sessions


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


def session_body(match: Match) -> bytes:
    """The creation of a human-vs-human session that deals as `match` does."""
    return orjson.dumps({"game": "basra", "rules": RULES, "seed": match.seed,
                         "seats": [{"type": "human"}, {"type": "human"}]})  # fmt: skip


def create_session(connection: http.client.HTTPConnection, match: Match) -> dict[str, Any]:
    """A session for `match`, created over `connection`: its id and seats (with tokens)."""
    status, answer = post(connection, "/v1/sessions", session_body(match), JSON)
    if status != 201:
        raise RuntimeError(f"creating a session: {status} {answer[:200]!r}")
    return orjson.loads(answer)


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

    def _start(self) -> None:
        match = self.matches[self.next_match % len(self.matches)]
        self.next_match += 1
        created = create_session(self.connections[0], match)
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


class Moves:
    """The hosted moves one wrk connection plays: whole sessions, created on the server, one
    move a line of its file (path, the mover's Authorization, body), each session's moves
    worked out in advance; and where each session starts in the file."""

    def __init__(self, file: Path, seeds: Iterator[str]) -> None:
        self.file, self.seeds = file, seeds
        self.starts: list[int] = []
        self.lines = 0
        self.next = 0  # the line the next slice starts at
        self.positions: list[bytes] = []  # stateless apply bodies of the same moves

    def provide(self, connection: http.client.HTTPConnection, wanted: int) -> None:
        """New sessions until at least `wanted` moves are left to play."""
        with self.file.open("a") as written:
            while self.lines - self.next < wanted:
                match = play_out(next(self.seeds))
                created = create_session(connection, match)
                path = f"/v1/sessions/{created['id']}/moves"
                self.starts.append(self.lines)
                for version, (mover, move, state) in enumerate(match.steps):
                    token = created["seats"][mover]["token"]
                    body = orjson.dumps({"move": move, "version": version})
                    written.write(f"{path}\tBearer {token}\t{body.decode()}\n")
                    if len(self.positions) < POSITIONS:
                        self.positions.append(orjson.dumps({"state": state, "move": move}))
                self.lines += len(match.steps)

    def resume(self, turn: int) -> int:
        """After a slice that stopped at line `turn`: the next slice starts at the session
        after the one that line is in, even when it is a session's first: the slice may
        have sent that move, and not read its answer. Returns how many moves it played."""
        played, following = turn - self.next, bisect.bisect_right(self.starts, turn)
        self.next = self.starts[following] if following < len(self.starts) else self.lines
        return played


def spread(items: list[bytes], most: int) -> list[bytes]:
    """At most `most` of `items`, taken at one stride across all of them (every connection's
    sessions, not only the first connection's)."""
    return items[:: max(1, len(items) // most)][:most]


def request(path: str, body: bytes, authorization: str | None = None) -> dict[str, Any]:
    """The WSGI environ of a POST of `body` to `path`, from loopback."""
    headers = {} if authorization is None else {"Authorization": authorization}
    built = EnvironBuilder(path, method="POST", data=body, content_type="application/json",
                           headers=headers, environ_base={"REMOTE_ADDR": "127.0.0.1"})  # fmt: skip
    return built.get_environ()


def answered(app: Any, environ: dict[str, Any]) -> tuple[int, bytes]:
    """The app's answer to one request, in this process: its status and body."""
    statuses: list[str] = []
    body = b"".join(app(environ, lambda status, *_: statuses.append(status)))
    return int(statuses[0].split()[0]), body


def cpu_per_request(app: Any, requests: list[dict[str, Any]]) -> float:
    """CPU seconds the app spends answering these requests in order, each with a 200."""
    started = time.process_time()
    for environ in requests:
        if answered(app, environ)[0] != 200:
            raise RuntimeError("a request in process was not answered 200")
    return time.process_time() - started


def in_process(redis_url: str, matches: int) -> dict[str, float]:
    """CPU µs a request through the app's WSGI callable in this one process (no gunicorn,
    no gevent): a hosted move on the in-process store and on Redis, and a stateless apply
    of the same positions; what a session's own work costs, and what its round trip adds.
    The requests are built before the clock starts; the first match warms up."""
    played = [play_out(f"in-process-{n}") for n in range(matches + 1)]
    timed = sum(len(match.steps) for match in played[1:])
    spent: dict[str, float] = {}
    configs = {"hosted move, in-process store": {}, "hosted move, Redis": {"REDIS_URL": redis_url},
               "stateless apply": {}}  # fmt: skip
    for name, config in configs.items():
        app = create_app({**config, "CLIENT_SEEDS": True, "LOG_LEVEL": "warning"})
        total = 0.0
        for number, match in enumerate(played):
            if name == "stateless apply":
                moves = [request("/v1/games/basra/apply",
                                 orjson.dumps({"state": state, "move": move}))
                         for _, move, state in match.steps]  # fmt: skip
            else:
                _, answer = answered(app, request("/v1/sessions", session_body(match)))
                created = orjson.loads(answer)
                path, seats = f"/v1/sessions/{created['id']}/moves", created["seats"]
                moves = [request(path, orjson.dumps({"move": move, "version": version}),
                                 f"Bearer {seats[mover]['token']}")
                         for version, (mover, move, _) in enumerate(match.steps)]  # fmt: skip
            seconds = cpu_per_request(app, moves)
            if number:
                total += seconds
        app.extensions["sessions"].close()
        spent[name] = total / timed * 1e6
    return spent


def cpu_of(workers: list[int], redis: int) -> list[float]:
    """CPU seconds so far of the gunicorn workers and of Redis."""
    return [cpu_seconds(workers), cpu_seconds([redis])]


def measure(seconds: int, connections: int, store: str = "redis") -> list[Target]:
    """Print hosted and stateless figures; return the hosted throughput and p99 targets.
    With `store` "memory" the service keeps its sessions in process (one worker, as
    gunicorn.conf.py then runs it): what a hosted move costs a worker without its round
    trip, to set beside the same worker on Redis (WEB_CONCURRENCY=1)."""
    with tempfile.TemporaryDirectory() as scratch, RedisServer(Path(scratch) / "redis") as redis:
        directory = Path(scratch) / "moves"
        directory.mkdir()
        log = Path(scratch) / "gunicorn.log"
        # The service's own log level and access log, as shipped (both loads write their
        # lines to the file). The clients' moves are worked out beforehand from the
        # sessions' seeds.
        settings = {"CLIENT_SEEDS": "true"}
        if store == "redis":
            settings["REDIS_URL"] = redis.url
        with gunicorn(log, ready="/readyz", **settings) as server:
            players = [
                Moves(directory / f"{n}.tsv", (f"bench-{n}-{match}" for match in count()))
                for n in range(connections)
            ]
            hosted, stateless = wrk.Load("hosted move"), wrk.Load("stateless apply")
            # CPU seconds of the workers and of Redis under each load, after the warm-up.
            spent = {"hosted": [0.0, 0.0], "stateless": [0.0, 0.0]}
            service = (server.workers(), redis.pid)
            wanted = FIRST_SLICE_MOVES
            for slice_number in range(seconds + 1):  # the first, a warm-up, is not reported
                # A connection of its own each time: gunicorn closes one idle for a while.
                with closing(http.client.HTTPConnection("127.0.0.1", server.port)) as creator:
                    for moves in players:
                        moves.provide(creator, 2 * wanted)
                if slice_number == 0:
                    # POSITIONS in all, not each: every wrk thread reads the whole file
                    # before any sends, and at 64 connections 64,000 bodies kept some of
                    # the connections idle past gunicorn's keep-alive, which closed them.
                    every = [body for moves in players for body in moves.positions]
                    bodies = wrk.body_file(Path(scratch) / "apply.jsonl", spread(every, POSITIONS))
                hosted_slice = hosted if slice_number else wrk.Load("warm-up")
                before = cpu_of(*service)
                turns = wrk.play(hosted_slice, server.url, directory,
                             [moves.next for moves in players], connections, 1)  # fmt: skip
                between = cpu_of(*service)
                wanted = max(moves.resume(turn) for moves, turn in zip(players, turns, strict=True))
                apply = stateless if slice_number else wrk.Load("warm-up")
                wrk.post(apply, server.url, "/v1/games/basra/apply", bodies, connections, 1,
                         threads=connections)  # fmt: skip
                if slice_number:
                    for name, start, end in (("hosted", before, between),
                                             ("stateless", between, cpu_of(*service))):  # fmt: skip
                        spent[name] = [total + after - earlier for total, after, earlier
                                       in zip(spent[name], end, start, strict=True)]  # fmt: skip
        cost = in_process(redis.url, 4)
    workers = len(service[0])
    where = "Redis" if store == "redis" else "the in-process store"
    print(f"\ngunicorn.conf.py ({workers} worker{'s' * (workers != 1)}) + {where}; wrk, "
          f"{connections} connections, "
          f"each playing its own sessions one after another (a thread each, for both loads); "
          f"{seconds} one-second slices of each taken in turn, after 1 s warm-up")  # fmt: skip
    report_loads([hosted, stateless])
    print("\nCPU per request: " + "; ".join(
        f"{load.name} {in_workers / load.requests * 1e6:.0f} µs in the workers, "
        f"{in_redis / load.requests * 1e6:.0f} µs in Redis"
        for load, (in_workers, in_redis) in zip((hosted, stateless), spent.values(), strict=True)
    ))  # fmt: skip
    print(
        "\nCPU per request in one process, through the app's WSGI callable (no gunicorn, "
        "no gevent): " + "; ".join(f"{name} {micros:.0f} µs" for name, micros in cost.items())
    )
    print(f"\nhosted / stateless = {hosted.rate / stateless.rate:.2f} (target >= {TARGET})")
    if hosted.failures or stateless.failures:
        sys.exit("some requests failed")
    floor, name = f"stateless apply, {connections} conns", f"hosted move @{connections}"
    return [
        Target(f"{name} req/s", hosted.rate, "req/s", stateless.rate, floor, TARGET),
        Target(f"{name} p99", hosted.percentile(0.99), "ms",
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=10, help="one-second slices of each")
    parser.add_argument("--connections", type=int, default=16, help="sessions played at once")
    parser.add_argument("--store", choices=["redis", "memory"], default="redis",
                        help="where the service keeps its sessions")  # fmt: skip
    args = parser.parse_args()
    targets = measure(args.seconds, args.connections, args.store)
    if args.store == "redis":  # the target is for the service on Redis, as deployed
        print_targets(targets, "hosted session targets")


if __name__ == "__main__":
    main()
