"""Open event streams per worker, and the latency of moves made while they are open.

    python -m bench.streams [--streams 0,500,1000] [--moves 300] [--sessions 50]

Starts its own throwaway redis-server and one gunicorn worker (the production
gunicorn.conf.py: gevent) on REDIS_URL. For each count it holds that many event streams open
on the worker (spread over `--sessions` sessions, alternately a seat's and a spectator's,
all read from one thread with a selector), then plays `--moves` moves one after another on
those sessions, timing each POST …/moves (the GET that picks the move is not timed). It
prints p50/p99 move latency beside the number of open streams, and checks that every stream
received every version of its session exactly once.
"""

import argparse
import http.client
import re
import tempfile
import threading
import time
from pathlib import Path

import orjson

from bench.harness import JSON, post
from tests.gunicorn_server import gunicorn
from tests.redis_server import RedisServer
from tests.service.stream_sockets import Streams

HUMANS = [{"type": "human"}, {"type": "human"}]
VERSION = re.compile(rb"^id: (\d+)$", re.MULTILINE)


def percentile(latencies: list[float], share: float) -> float:
    ordered = sorted(latencies)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000


class Table:
    """A session with its two seats on keep-alive connections."""

    def __init__(self, port: int, seed: str) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        body = {"game": "basra", "seats": HUMANS, "seed": seed, "spectators": 1}
        status, answer = post(self.http, "/v1/sessions", orjson.dumps(body), JSON)
        if status != 201:
            raise RuntimeError(f"creating a session: {status} {answer[:200]!r}")
        created = orjson.loads(answer)
        self.id = created["id"]
        self.seats = [seat["token"] for seat in created["seats"]]
        self.spectator = created["spectators"][0]["token"]
        self.version = 0

    def read(self, headers: dict[str, str]) -> dict:
        """The session as a seat sees it (untimed); a connection the server closed while it
        idled (keep-alive ran out while the streams opened) is opened again."""
        try:
            self.http.request("GET", f"/v1/sessions/{self.id}", headers=headers)
            return orjson.loads(self.http.getresponse().read())
        except (http.client.HTTPException, ConnectionError):
            self.http.close()
            self.http.request("GET", f"/v1/sessions/{self.id}", headers=headers)
            return orjson.loads(self.http.getresponse().read())

    def move(self) -> float:
        """The seat to move plays its first legal move; the seconds the POST took."""
        for token in self.seats:
            headers = {"Authorization": f"Bearer {token}"}
            seen = self.read(headers)
            if seen["moves"]:
                break
        else:
            raise RuntimeError("nobody's turn: the match is over")
        first = seen["moves"][0]
        move = {"card": first["card"], "capture": first["capture"]}
        body = orjson.dumps({"move": move, "version": seen["version"]})
        started = time.perf_counter()
        status, answer = post(self.http, f"/v1/sessions/{self.id}/moves", body, {**JSON, **headers})
        elapsed = time.perf_counter() - started
        if status != 200:
            raise RuntimeError(f"a move: {status} {answer[:200]!r}")
        self.version = orjson.loads(answer)["version"]
        return elapsed


def measure(port: int, count: int, moves: int, sessions: int, run: int) -> dict:
    tables = [Table(port, f"streams-{run}-{n}") for n in range(sessions)]
    streams = Streams(port)
    stop = threading.Event()
    for n in range(count):
        table = tables[n % sessions]
        streams.connect(table.id, table.spectator if n % 2 else table.seats[1])
    opened = streams.until(lambda: all(s.has(b": ping") for s in streams.open), 120)
    if not opened:
        raise RuntimeError("not every stream opened")
    lock = threading.Lock()

    def pump() -> None:
        while not stop.is_set():
            with lock:
                streams.pump(0.02)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    latencies = [tables[turn % sessions].move() for turn in range(moves)]
    by_id = {table.id: table for table in tables}

    def delivered() -> bool:
        return all(
            [int(v) for v in VERSION.findall(bytes(s.received))]
            == list(range(1, by_id[s.session_id].version + 1))
            for s in streams.open
        )

    deadline = time.monotonic() + 60
    while not delivered() and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    reader.join()
    complete = delivered()
    with lock:
        streams.close()
    return {
        "streams": count,
        "moves": moves,
        "p50": percentile(latencies, 0.5),
        "p99": percentile(latencies, 0.99),
        "max": max(latencies) * 1000,
        "delivered": complete,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", default="0,500,1000", help="open streams, comma-separated")
    parser.add_argument("--moves", type=int, default=300, help="timed moves per count")
    parser.add_argument("--sessions", type=int, default=50, help="sessions the streams watch")
    args = parser.parse_args()
    counts = [int(text) for text in args.streams.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as scratch, RedisServer(Path(scratch) / "redis") as redis:
        settings = {
            "REDIS_URL": redis.url,
            "WEB_CONCURRENCY": "1",
            "CLIENT_SEEDS": "true",
            "LOG_LEVEL": "warning",
            "GUNICORN_WORKER_CONNECTIONS": str(max(counts) + 200),
        }
        log = Path(scratch) / "gunicorn.log"
        options = ("--access-logfile", "/dev/null")
        with gunicorn(log, *options, ready="/readyz", **settings) as server:
            for run, count in enumerate(counts):
                rows.append(measure(server.port, count, args.moves, args.sessions, run))
    print("\none gunicorn worker (gunicorn.conf.py) + Redis, moves one at a time")
    print(f"{'open streams':>12} {'moves':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}  delivered")
    for row in rows:
        print(
            f"{row['streams']:>12} {row['moves']:>6} {row['p50']:>8.2f} {row['p99']:>8.2f} "
            f"{row['max']:>8.2f}  {'every version once' if row['delivered'] else 'INCOMPLETE'}"
        )


if __name__ == "__main__":
    main()
