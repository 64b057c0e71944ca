"""A throwaway Redis Cluster on free loopback ports: three masters (redis-server
--cluster-enabled yes), joined by `redis-cli --cluster create`, for tests and benchmarks."""

import shutil
import subprocess
import time
from pathlib import Path

import redis

from tests.redis_server import RedisServer, free_port

MASTERS = 3
READY_TIMEOUT = 30.0


class RedisCluster:
    """Three cluster-enabled redis-servers holding all 16384 slots between them."""

    def __init__(self, directory: Path | str, masters: int = MASTERS) -> None:
        if shutil.which("redis-cli") is None:
            raise RuntimeError("redis-cli not found on PATH: run `make redis-server`")
        directory = Path(directory)
        self.nodes = [
            RedisServer(
                directory / f"node{n}",
                cluster_enabled="yes",
                cluster_config_file="nodes.conf",
                cluster_node_timeout="2000",
                # Its own bus port: the default (port + 10000) fails above port 55535.
                cluster_port=str(free_port()),
            )
            for n in range(masters)
        ]

    @property
    def url(self) -> str:
        """Any one node: the cluster client finds the others."""
        return self.nodes[0].url.removesuffix("/0")

    def start(self) -> None:
        for node in self.nodes:
            node.start()
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        subprocess.run(
            ["redis-cli", "--cluster", "create", *addresses, "--cluster-yes"],
            check=True, capture_output=True, timeout=READY_TIMEOUT,
        )  # fmt: skip
        self._wait_until_ok()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> "RedisCluster":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def flush(self) -> None:
        for node in self.nodes:
            with node.client() as client:
                client.flushall()

    def _wait_until_ok(self) -> None:
        """Every node agrees the cluster is up (the slots are spread by gossip)."""
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            states = []
            for node in self.nodes:
                with node.client() as client:
                    states.append(client.execute_command("CLUSTER", "INFO"))
            if all(b"cluster_state:ok" in state for state in states):
                return
            time.sleep(0.1)
        raise TimeoutError(f"the cluster did not come up within {READY_TIMEOUT:g} s")


def slot_of(client: redis.Redis, key: str) -> int:
    return int(client.execute_command("CLUSTER", "KEYSLOT", key))
