"""Hosted move throughput on Redis with `appendfsync everysec` beside `appendfsync always`.

    python -m bench.durability [--seconds 10] [--windows 10] [--games 16]

Two throwaway redis-servers with the append-only file on, one syncing it to disk once a
second (a host crash may lose about a second of acknowledged moves), one before every
answer (it loses none), and a gunicorn (production gunicorn.conf.py) on each; the clients
of bench.sessions play on both in alternating windows of one run. Prints moves/s and
p50/p99 of both and the ratio: what durability costs on this machine's disk.
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
        compare_hosted(servers, args, "always / everysec")


if __name__ == "__main__":
    main()
