"""Hosted move throughput on Redis with `appendfsync everysec` beside `appendfsync always`.

    python -m bench.durability [--seconds 10] [--windows 10] [--games 16]

Two throwaway redis-servers with the append-only file on, one syncing it to disk once a
second (a host crash may lose about a second of acknowledged moves), one before every
answer (it loses none), and a gunicorn (production gunicorn.conf.py) on each; the clients
of bench.sessions play on both in alternating windows of one run. Prints moves/s and
p50/p99 of both and the ratio: what durability costs on this machine's disk.
"""

import argparse
import sys
import tempfile
from contextlib import ExitStack
from functools import partial
from pathlib import Path

from bench.harness import closed_loop, in_turn, report
from bench.sessions import Player, play_out
from tests.gunicorn_server import gunicorn
from tests.redis_server import RedisServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per measurement")
    parser.add_argument("--windows", type=int, default=10, help="alternations of the two")
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--games", type=int, default=16, help="concurrent games (threads)")
    parser.add_argument("--matches", type=int, default=4, help="seeded matches per thread")
    args = parser.parse_args()

    schedules = [
        [play_out(f"bench-{game}-{n}") for n in range(args.matches)] for game in range(args.games)
    ]
    with tempfile.TemporaryDirectory() as scratch, ExitStack() as stack:
        servers = {}
        for sync in ("everysec", "always"):
            directory = Path(scratch) / sync
            redis = stack.enter_context(
                RedisServer(directory / "redis", appendonly="yes", appendfsync=sync)
            )
            servers[f"appendfsync {sync}"] = stack.enter_context(gunicorn(
                directory / "gunicorn.log", "--access-logfile", "/dev/null", ready="/readyz",
                REDIS_URL=redis.url, LOG_LEVEL="warning", CLIENT_SEEDS="true",
            ))  # fmt: skip
        # The clients connect once both servers are up: an idle keep-alive connection
        # would be closed by the first server while the second starts.
        loads = []
        for name, server in servers.items():
            players = [Player(server.port, matches) for matches in schedules]
            loads.append((name, partial(closed_loop, [p.hosted_move for p in players])))
        in_turn(loads, args.warmup, 1)  # the warm-up, not reported
        everysec, always = in_turn(loads, args.seconds, args.windows)
    print(f"\nhosted moves, {args.games} client threads, {args.seconds:g} s each in "
          f"{args.windows} alternating windows")  # fmt: skip
    report([everysec, always], "", 24, "moves/s", count="moves")
    print(f"\nalways / everysec = {always.rate / everysec.rate:.2f} (moves/s), "
          f"p99 {always.percentile(0.99) / everysec.percentile(0.99):.2f}x")  # fmt: skip
    if everysec.failures or always.failures:
        sys.exit("some requests failed")


if __name__ == "__main__":
    main()
