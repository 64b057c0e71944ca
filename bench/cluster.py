"""Hosted move throughput on a three-master Redis Cluster beside one Redis, in one run.

    python -m bench.cluster [--seconds 10] [--windows 10] [--games 16]

Starts a throwaway redis-server, a throwaway three-master Redis Cluster (loopback ports) and
two gunicorns with the production gunicorn.conf.py: one with REDIS_URL on the single Redis,
one with REDIS_CLUSTER=true and REDIS_URL on one node of the cluster. The clients are those
of bench.sessions (human-vs-human sessions, moves worked out beforehand, one keep-alive
connection per seat); the two servers are measured in alternating windows so a change in
the machine's load weighs on both alike. Prints moves/s and p50/p99 of both and the ratio.

On one machine the cluster cannot be faster: its three masters share the cores the workers
need. What this measures is the cluster client's own cost per move (slot routing, one
connection pool per node); the cluster's gain, memory and CPU of several hosts, shows only
when its masters run on hosts of their own.
"""

import argparse
import os
import sys
import tempfile
from contextlib import ExitStack
from functools import partial
from pathlib import Path

from bench.harness import closed_loop, in_turn, report
from bench.sessions import Player, play_out
from tests.gunicorn_server import gunicorn
from tests.redis_cluster import RedisCluster
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
        directory = Path(scratch)
        single = stack.enter_context(RedisServer(directory / "redis"))
        cluster = stack.enter_context(RedisCluster(directory / "cluster"))
        options = ("--access-logfile", "/dev/null")
        servers = {
            "one Redis": stack.enter_context(gunicorn(
                directory / "single.log", *options, ready="/readyz",
                REDIS_URL=single.url, LOG_LEVEL="warning", CLIENT_SEEDS="true",
            )),
            "3-master cluster": stack.enter_context(gunicorn(
                directory / "cluster.log", *options, ready="/readyz",
                REDIS_URL=cluster.url, REDIS_CLUSTER="true", LOG_LEVEL="warning",
                CLIENT_SEEDS="true",
            )),
        }  # fmt: skip
        loads = []
        for name, server in servers.items():
            players = [Player(server.port, matches) for matches in schedules]
            loads.append((name, partial(closed_loop, [p.hosted_move for p in players])))
        in_turn(loads, args.warmup, 1)  # the warm-up, not reported
        one, clustered = in_turn(loads, args.seconds, args.windows)
    workers = os.environ.get("WEB_CONCURRENCY", os.cpu_count())
    print(f"\nhosted moves, gunicorn.conf.py ({workers} workers) each, {args.games} client "
          f"threads, {args.seconds:g} s each in {args.windows} alternating windows, "
          f"after {args.warmup:g} s warm-up")  # fmt: skip
    report([one, clustered], "", 22, "moves/s", count="moves")
    print(f"\ncluster / one Redis = {clustered.rate / one.rate:.2f} (moves/s), "
          f"p99 {clustered.percentile(0.99) / one.percentile(0.99):.2f}x")  # fmt: skip
    if one.failures or clustered.failures:
        sys.exit("some requests failed")


if __name__ == "__main__":
    main()
