"""Hosted move throughput with durable acknowledgements (REDIS_MIN_REPLICAS=1) beside
without (0), on one primary with one replica.

    python -m bench.replicas [--seconds 10] [--windows 10] [--games 16]

A throwaway primary and a replica of it, and two gunicorns (production gunicorn.conf.py) on
that primary, one waiting for the replica after every call (WAIT 1), one not; the clients of
bench.sessions play on both in alternating windows of one run. Prints moves/s and p50/p99 of
both and the ratio: what acknowledging only replicated writes costs on this machine.
"""

import tempfile
from contextlib import ExitStack
from pathlib import Path

from bench.sessions import compare_hosted, hosted_arguments
from tests.gunicorn_server import gunicorn
from tests.redis_server import RedisServer


def main() -> None:
    args = hosted_arguments(__doc__)
    with tempfile.TemporaryDirectory() as scratch, ExitStack() as stack:
        directory = Path(scratch)
        primary = stack.enter_context(RedisServer(directory / "primary"))
        replica = stack.enter_context(RedisServer(directory / "replica"))
        with replica.client() as client:
            client.replicaof("127.0.0.1", primary.port)
        with primary.client() as client:
            client.wait(1, 30_000)  # the replica is connected and in sync
        servers = {}
        for replicas in ("0", "1"):
            servers[f"REDIS_MIN_REPLICAS={replicas}"] = stack.enter_context(gunicorn(
                directory / f"gunicorn-{replicas}.log", "--access-logfile", "/dev/null",
                ready="/readyz", REDIS_URL=primary.url, REDIS_MIN_REPLICAS=replicas,
                LOG_LEVEL="warning", CLIENT_SEEDS="true",
            ))  # fmt: skip
        # The clients connect once both servers are up (as bench.durability does).
        compare_hosted(servers, args, "min replicas 1 / 0")


if __name__ == "__main__":
    main()
