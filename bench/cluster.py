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

import tempfile
from contextlib import ExitStack
from pathlib import Path

from bench.sessions import compare_hosted, hosted_arguments
from tests.gunicorn_server import gunicorn
from tests.redis_cluster import RedisCluster
from tests.redis_server import RedisServer


def main() -> None:
    args = hosted_arguments(__doc__)
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
        # The clients connect once both servers are up: an idle keep-alive connection
        # would be closed by the first server while the second starts.
        compare_hosted(servers, args, "cluster / one Redis")


if __name__ == "__main__":
    main()
