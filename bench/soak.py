"""A soak: mixed traffic for minutes on a Sentinel-managed Redis, through a Redis pause and
a primary failover. Not in CI.

    python -m bench.soak [--seconds 600] [--games 8] [--streams 200] [--polls 8]
                         [--min-replicas 1]

Starts a primary with two replicas and three sentinels (tests/redis_sentinel.py) and the
production gunicorn (2 workers) on them, then, all at once: `--games` clients playing whole
hosted games against a bot and retrying each move under its Idempotency-Key
(tests/service/hosted_games.py), `--streams` event streams held open on those sessions,
`--polls` long-pollers, and a creator making a session every half second. At 40 % of the run
the primary's writes are paused for 3 s (`CLIENT PAUSE 3000 WRITE`), at 70 % the primary is
SIGKILLed (the sentinels promote a replica) and restarted 10 s later (it rejoins as a
replica). Every 10 s it prints moves/s, move p50/p99, Redis memory and connected clients on
the current primary, and every answer by status; at the end, every acknowledged move is
checked against its session's events (nothing acknowledged lost or doubled). The cost of
`REDIS_MIN_REPLICAS=1` itself is `python -m bench.replicas`.
"""

import argparse
import tempfile
import threading
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

import requests

from bench.streams import percentile
from tests.gunicorn_server import gunicorn
from tests.redis_sentinel import MASTER, SentinelSet
from tests.service.hosted_games import check_history, play_turn, start
from tests.service.stream_sockets import Streams

SAMPLE_SECONDS = 10.0
CREATE_EVERY = 0.5
WITH_BOT = [{"type": "human"}, {"type": "bot", "level": "greedy"}]


class Soak:
    """The traffic and what it saw, shared by the client threads (one lock)."""

    def __init__(self, base: str, until: float) -> None:
        self.base, self.until = base, until
        self.lock = threading.Lock()
        self.moves: list[tuple[float, float]] = []  # (when answered, seconds it took)
        self.statuses: Counter[str] = Counter()
        self.games: list = []
        self.failures: list[BaseException] = []

    def count(self, what: str, status: int | str) -> None:
        with self.lock:
            self.statuses[f"{what} {status}"] += 1

    def player(self) -> None:
        """Whole games, one after another, until the end of the run."""
        try:
            while time.monotonic() < self.until:
                game = start(self.base, WITH_BOT)
                with self.lock:
                    self.games.append(game)
                turn = 0
                while time.monotonic() < self.until:
                    began = time.monotonic()
                    if not play_turn(game, turn):
                        break
                    ended = time.monotonic()
                    with self.lock:
                        self.moves.append((ended, ended - began))
                    turn += 1
        except BaseException as failure:  # reported at the end
            self.failures.append(failure)

    def poller(self, session: dict) -> None:
        url = f"{self.base}/v1/sessions/{session['id']}/events"
        headers = {"Authorization": f"Bearer {session['spectators'][0]['token']}"}
        after = 0
        while time.monotonic() < self.until:
            try:
                answer = requests.get(url, params={"after": after}, headers=headers, timeout=30)
            except requests.RequestException as error:
                self.count("poll", type(error).__name__)
                time.sleep(0.5)
                continue
            self.count("poll", answer.status_code)
            if answer.status_code == 200:
                events = answer.json()
                after = events[-1]["version"] if events else after
            else:
                time.sleep(float(answer.headers.get("Retry-After", "1")))

    def creator(self) -> None:
        body = {"game": "basra", "seats": WITH_BOT}
        while time.monotonic() < self.until:
            try:
                answer = requests.post(f"{self.base}/v1/sessions", json=body, timeout=30)
                self.count("create", answer.status_code)
            except requests.RequestException as error:
                self.count("create", type(error).__name__)
            time.sleep(CREATE_EVERY)

    def window(self, since: float, now: float) -> tuple[int, float, float]:
        """Moves answered in [since, now) and their p50 / p99 in ms."""
        with self.lock:
            took = [seconds for at, seconds in self.moves if since <= at < now]
        if not took:
            return 0, 0.0, 0.0
        return len(took), percentile(took, 0.5), percentile(took, 0.99)


def redis_figures(watched: SentinelSet) -> str:
    try:
        with watched.primary().client() as client:
            memory = client.info("memory")["used_memory"]
            clients = client.info("clients")["connected_clients"]
    except Exception as error:  # the primary may be the one just killed
        return f"redis: {type(error).__name__}"
    return f"redis {memory / 1e6:.1f} MB, {clients} clients"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--games", type=int, default=8, help="clients playing hosted games")
    parser.add_argument("--streams", type=int, default=200, help="event streams held open")
    parser.add_argument("--polls", type=int, default=8, help="long-polling spectators")
    parser.add_argument("--min-replicas", default="1", help="REDIS_MIN_REPLICAS")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch, ExitStack() as stack:
        directory = Path(scratch)
        watched = stack.enter_context(SentinelSet(directory / "sentinel"))
        server = stack.enter_context(gunicorn(
            directory / "gunicorn.log", "--access-logfile", "/dev/null", ready="/readyz",
            REDIS_SENTINELS=watched.setting, REDIS_SENTINEL_MASTER=MASTER,
            REDIS_MIN_REPLICAS=args.min_replicas, WEB_CONCURRENCY="2", RATE_LIMITS="false",
            MAX_WAITERS_PER_TOKEN="1000", LONG_POLL_SECONDS="5",
            LOG_LEVEL="warning",
        ))  # fmt: skip
        base = server.url
        watchedsessions = [
            requests.post(f"{base}/v1/sessions", json={"game": "basra", "seats": WITH_BOT,
                                                      "spectators": 1}, timeout=30).json()
            for _ in range(max(1, args.polls))
        ]  # fmt: skip
        begun = time.monotonic()
        soak = Soak(base, begun + args.seconds)
        threads = [threading.Thread(target=soak.player) for _ in range(args.games)]
        threads += [threading.Thread(target=soak.poller, args=(s,)) for s in watchedsessions]
        threads.append(threading.Thread(target=soak.creator))
        for thread in threads:
            thread.start()
        streams = Streams(server.port)
        for n in range(args.streams):
            session = watchedsessions[n % len(watchedsessions)]
            streams.connect(session["id"], session["spectators"][0]["token"])
        faults = [(0.4, "redis writes paused 3 s"), (0.7, "primary SIGKILLed")]
        killed, last = None, begun
        print(f"soak: {args.seconds:g} s, {args.games} players, {args.streams} streams, "
              f"{args.polls} long polls, a creation every {CREATE_EVERY:g} s, "
              f"REDIS_MIN_REPLICAS={args.min_replicas}")  # fmt: skip
        while time.monotonic() < soak.until:
            streams.pump(0.2)
            now = time.monotonic()
            if faults and now - begun >= faults[0][0] * args.seconds:
                _, what = faults.pop(0)
                print(f"{now - begun:6.0f} s  FAULT: {what}")
                if what.startswith("redis writes"):
                    with watched.primary().client() as client:
                        client.execute_command("CLIENT", "PAUSE", "3000", "WRITE")
                else:
                    killed = watched.primary()
                    killed.kill()
                    killed_at = now
            if killed is not None and now - killed_at >= 10:
                killed.start()  # the sentinels make it a replica of the new primary
                killed = None
            if now - last >= SAMPLE_SECONDS:
                moves, p50, p99 = soak.window(last, now)
                with soak.lock:
                    statuses = dict(soak.statuses)
                    errors = Counter(
                        s for game in soak.games for s in game.seen.statuses if s != 200
                    )
                print(f"{now - begun:6.0f} s  {moves / (now - last):6.1f} moves/s  "
                      f"p50 {p50:6.1f} ms  p99 {p99:7.1f} ms  {redis_figures(watched)}  "
                      f"streams pinged {sum(s.has(b': ping') for s in streams.open)}  "
                      f"moves not 200: {dict(errors)}  others: {statuses}")  # fmt: skip
                last = now
        for thread in threads:
            thread.join()
        streams.close()
        lost = 0
        for game in soak.games:
            try:
                check_history(game)
            except AssertionError:
                lost += 1
        total, p50, p99 = soak.window(begun, time.monotonic())
        print(f"total: {total} moves acknowledged, {total / args.seconds:.1f} moves/s, "
              f"p50 {p50:.1f} ms, p99 {p99:.1f} ms; {len(soak.games)} games checked, "
              f"{lost} with an acknowledged move lost or doubled; "
              f"client failures: {[repr(f) for f in soak.failures]}")  # fmt: skip


if __name__ == "__main__":
    main()
