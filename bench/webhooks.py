"""Webhook delivery latency beside move latency, and the size of a match record.

    python -m bench.webhooks [--seconds 10] [--windows 6] [--games 8]

Starts a throwaway redis-server, a gunicorn (production gunicorn.conf.py) on it allowed to
send webhooks to 127.0.0.1, and a receiver on loopback in a process of its own: a lean
one, since in production the receiver is the backend's, on another machine, and
here its CPU would be taken from the service's (the tests verify every signature with the
Standard Webhooks library; this one only keeps when each message arrived). Client threads
play human-against-bot Basra sessions as fast as the server answers, in windows alternating
between sessions created with a webhook (every message: turn and match end) and without one,
so that a change in the machine's load weighs on both alike. Prints moves/s and move p50/p99
of both, their ratio (target: with webhooks >= 0.9 x without), the service's CPU time per
move with and without (its workers' and Redis', from /proc: on a shared machine a steadier
figure than the ratio, which other jobs' load sways), and the delivery latency p50/p99
from the commit (the message's `timestamp`) to its arrival at the receiver. Then
plays a few whole matches of each game and prints a finished record's size in bytes per move.
"""

import argparse
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import orjson
import requests

from bench.harness import cpu_seconds
from bench.report import Target, print_targets
from tests.gunicorn_server import gunicorn
from tests.redis_server import RedisServer

TARGET = 0.9
SHORT = {"basra": {"preset": "levantine", "target_score": 1}, "bank": {"target_score": 1}}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


class Arrivals(socketserver.BaseRequestHandler):
    """A receiver's connection: answers each request 204 and keeps (arrival, body) in its
    server's `kept`. Blocking reads in a thread a connection: a deliverer keeps a few
    connections open, and this costs a fraction of an event loop's work per message."""

    server: "Receiver"

    def handle(self) -> None:
        pending = b""
        while data := self.request.recv(65536):
            pending += data
            while (end := pending.find(b"\r\n\r\n")) >= 0:
                head = pending[:end].lower()
                length = int(head.split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
                if len(pending) < end + 4 + length:
                    break
                body, pending = pending[end + 4 : end + 4 + length], pending[end + 4 + length :]
                self.server.kept.append((time.time(), body))  # list.append is atomic
                self.request.sendall(b"HTTP/1.1 204 No Content\r\n\r\n")


class Receiver(socketserver.ThreadingTCPServer):
    daemon_threads = True
    kept: list[tuple[float, bytes]]


def receive(path: str) -> None:
    """`python -m bench.webhooks --receive FILE`: prints the receiver's URL, then writes a
    line per message to FILE: its arrival time and its body."""
    server = Receiver(("127.0.0.1", 0), Arrivals)
    server.kept = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"http://127.0.0.1:{server.server_address[1]}/hooks", flush=True)
    with open(path, "w") as out:
        while True:
            time.sleep(0.2)
            count = len(server.kept)
            written, server.kept[:count] = server.kept[:count], []
            out.writelines(f"{at}\t{body.decode()}\n" for at, body in written)
            out.flush()


def play(base: str, url: str | None, until: float, latencies: list[float]) -> int:
    """Moves played until `until` in sessions with (url) or without a webhook."""
    http = requests.Session()
    moves = 0
    while time.monotonic() < until:
        body = {"game": "basra", "rules": SHORT["basra"],
                "seats": [{"type": "human"}, {"type": "bot", "level": "random"}],
                **({"webhook": {"url": url}} if url else {})}  # fmt: skip
        created = http.post(f"{base}/v1/sessions", json=body, timeout=60).json()
        session = f"{base}/v1/sessions/{created['id']}"
        auth = {"Authorization": f"Bearer {created['seats'][0]['token']}"}
        answer = http.get(session, headers=auth, timeout=60).json()
        while answer["moves"] and time.monotonic() < until:
            started = time.perf_counter()
            move = {"move": answer["moves"][0], "version": answer["version"]}
            answer = http.post(f"{session}/moves", json=move, headers=auth, timeout=60).json()
            latencies.append(time.perf_counter() - started)
            moves += 1
    return moves


def window(base: str, url: str | None, seconds: float, games: int) -> tuple[int, list[float]]:
    latencies: list[float] = []
    counts = [0] * games
    until = time.monotonic() + seconds

    def run(index: int) -> None:
        counts[index] = play(base, url, until, latencies)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(games)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts), latencies


def record_size(base: str, game: str, matches: int) -> float:
    """Bytes per move of finished records of `game` (human against a greedy bot)."""
    sizes, moves = 0, 0
    for _ in range(matches):
        body = {"game": game, "rules": SHORT[game],
                "seats": [{"type": "human"}, {"type": "bot", "level": "greedy"}]}  # fmt: skip
        created = requests.post(f"{base}/v1/sessions", json=body, timeout=60).json()
        session = f"{base}/v1/sessions/{created['id']}"
        auth = {"Authorization": f"Bearer {created['seats'][0]['token']}"}
        while (answer := requests.get(session, headers=auth, timeout=60).json())["moves"]:
            move = {"move": answer["moves"][0], "version": answer["version"]}
            requests.post(f"{session}/moves", json=move, headers=auth, timeout=60)
        record = requests.get(f"{session}/record", headers=auth, timeout=60)
        sizes += len(record.content)
        moves += len(record.json()["moves"])
    return sizes / moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per window")
    parser.add_argument("--windows", type=int, default=6, help="alternating windows in all")
    parser.add_argument("--games", type=int, default=8, help="client threads")
    parser.add_argument("--receive", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.receive:
        return receive(args.receive)
    with tempfile.TemporaryDirectory() as scratch:
        arrivals = Path(scratch) / "arrivals"
        hook = subprocess.Popen(
            [sys.executable, "-m", "bench.webhooks", "--receive", str(arrivals)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        url = hook.stdout.readline().strip()
        redis = RedisServer(Path(scratch) / "redis")
        with redis, gunicorn(
            Path(scratch) / "gunicorn.log", "--access-logfile", "/dev/null", ready="/readyz",
            REDIS_URL=redis.url, LOG_LEVEL="warning", WEBHOOK_HOSTS="127.0.0.1",
        ) as served:  # fmt: skip
            totals = {"on": [0, 0.0, []], "off": [0, 0.0, []]}
            service = [*served.workers(), redis.pid]
            spent = {"on": 0.0, "off": 0.0}
            for number in range(args.windows):
                side = "on" if number % 2 == 0 else "off"
                started, used = time.monotonic(), cpu_seconds(service)
                moves, latencies = window(
                    served.url, url if side == "on" else None, args.seconds, args.games
                )
                totals[side][0] += moves
                totals[side][1] += time.monotonic() - started
                totals[side][2] += latencies
                spent[side] += cpu_seconds(service) - used
            time.sleep(2.0)  # the last window's messages arrive
            sizes = {game: record_size(served.url, game, 3) for game in SHORT}
        hook.terminate()
        hook.wait(timeout=10)
        delays = []
        for line in arrivals.read_text().splitlines():
            arrived, body = line.split("\t", 1)
            committed = datetime.fromisoformat(orjson.loads(body)["timestamp"]).timestamp()
            delays.append(float(arrived) - committed)
    rate = {side: moves / seconds for side, (moves, seconds, _) in totals.items()}
    for side, (_, _, latencies) in totals.items():
        print(f"webhooks {side}: {rate[side]:.0f} moves/s, move p50 "
              f"{percentile(latencies, 0.5) * 1000:.1f} ms, p99 "
              f"{percentile(latencies, 0.99) * 1000:.1f} ms")  # fmt: skip
    per_move = {side: spent[side] / max(1, totals[side][0]) * 1e6 for side in spent}
    print(f"service CPU per move (workers and Redis): on {per_move['on']:.0f} us, off "
          f"{per_move['off']:.0f} us, on/off {per_move['on'] / per_move['off']:.2f}")  # fmt: skip
    print(f"deliveries: {len(delays)} messages, commit -> receiver p50 "
          f"{percentile(delays, 0.5) * 1000:.1f} ms, p99 {percentile(delays, 0.99) * 1000:.1f} ms, "
          f"mean {statistics.fmean(delays) * 1000 if delays else float('nan'):.1f} ms")  # fmt: skip
    for game, size in sizes.items():
        print(f"record size, {game}: {size:.0f} bytes per move")
    print_targets([Target("moves/s with webhooks", rate["on"], "moves/s", rate["off"],
                          "without webhooks", TARGET)])  # fmt: skip


if __name__ == "__main__":
    main()
