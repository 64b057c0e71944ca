"""A throwaway Redis Cluster on free loopback ports: three masters (redis-server
--cluster-enabled yes), with a replica each when asked, joined by `redis-cli --cluster
create`, for tests and benchmarks."""

import shutil
import subprocess
import time
from pathlib import Path

import redis

from tests.redis_server import Processes, RedisServer, free_port

MASTERS = 3
READY_TIMEOUT = 30.0
START_ATTEMPTS = 3


class RedisCluster(Processes):
    """Three cluster-enabled redis-servers holding all 16384 slots between them, and
    `replicas` replicas of each (which take over when their master dies)."""

    def __init__(self, directory: Path | str, masters: int = MASTERS, replicas: int = 0) -> None:
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
            for n in range(masters * (1 + replicas))
        ]
        self.replicas = replicas

    @property
    def url(self) -> str:
        """Any one node: the cluster client finds the others."""
        return self.nodes[0].url.removesuffix("/0")

    def start(self) -> None:
        for node in self.nodes:
            self._start_node(node)
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        subprocess.run(
            ["redis-cli", "--cluster", "create", *addresses, "--cluster-yes",
             "--cluster-replicas", str(self.replicas)],
            check=True, capture_output=True, timeout=READY_TIMEOUT,
        )  # fmt: skip
        self._wait_until_ok()
        if self.replicas:
            self.wait_until_replicated()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def flush(self) -> None:
        for node in self.nodes:
            with node.client() as client:
                if client.info("replication")["role"] == "master":
                    client.flushall()

    def master_of(self, key: str) -> RedisServer:
        """The node that is the master of `key`'s slot now."""
        for node in self.nodes:
            if not node.running:
                continue
            with node.client() as client:
                slot = slot_of(client, key)
                for start, end, master, *_ in client.execute_command("CLUSTER", "SLOTS"):
                    if start <= slot <= end:
                        return next(n for n in self.nodes if n.port == int(master[1]))
        raise RuntimeError("no node answers")

    def wait_for_failover(self, dead: RedisServer) -> None:
        """After `dead` (a master) died: until a replica holds its slots and every live node
        says the cluster is up."""
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            try:
                if self._live_states_ok() and all(
                    self.master_of(f"{{{n}}}") is not dead for n in range(64)
                ):
                    return
            except (redis.RedisError, RuntimeError, StopIteration):
                pass
            time.sleep(0.2)
        raise TimeoutError(f"no failover within {READY_TIMEOUT:g} s")

    def wait_until_replicated(self) -> None:
        """Every master has its replicas connected and in sync."""
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self._replicated():
                return
            time.sleep(0.2)
        raise TimeoutError(f"the replicas did not sync within {READY_TIMEOUT:g} s")

    def _replicated(self) -> bool:
        masters = 0
        for node in self.nodes:
            try:
                with node.client() as client:
                    info = client.info("replication")
            except redis.RedisError:
                return False
            if info["role"] == "master":
                masters += 1
                online = [
                    v for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)
                ]
                if len([r for r in online if r.get("state") == "online"]) < self.replicas:
                    return False
        return masters == len(self.nodes) // (1 + self.replicas)

    def _live_states_ok(self) -> bool:
        for node in self.nodes:
            if node.running:
                with node.client() as client:
                    if b"cluster_state:ok" not in client.execute_command("CLUSTER", "INFO"):
                        return False
        return True

    @staticmethod
    def _start_node(node: RedisServer) -> None:
        """Start one node; a bus port taken meanwhile by another process gets a new one."""
        for attempt in range(START_ATTEMPTS):
            try:
                node.start()
                return
            except RuntimeError:
                if attempt == START_ATTEMPTS - 1:
                    raise
                node.options["cluster-port"] = str(free_port())

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
