"""A throwaway Sentinel-managed Redis on free loopback ports, for tests and benchmarks: a
primary, replicas of it and three sentinels (`redis-server <file> --sentinel`), which fail
the primary over to a replica within a few seconds of its death."""

import shutil
import subprocess
import time
from pathlib import Path

import redis

from tests.redis_server import Processes, RedisServer, free_port

MASTER = "cards"
SENTINELS = 3
READY_TIMEOUT = 30.0
# How soon the sentinels call a silent primary down (then they agree and promote).
DOWN_AFTER_MS = 1000
# A failover that fails (no replica fit to promote yet) is tried again after twice this.
FAILOVER_TIMEOUT_MS = 4000
# How long a failover may take. A sentinel whose own process stalled for two seconds on a
# loaded machine enters TILT and does nothing for 30 s (Redis's fixed period); its first
# failover after may then find no replica fit yet and try again 2 x FAILOVER_TIMEOUT_MS
# later (seen in CI: TILT, then "-failover-abort-no-good-slave").
FAILOVER_SECONDS = 60.0


class Sentinel:
    """One sentinel process with its own (rewritable) configuration file."""

    def __init__(self, directory: Path, primary_port: int) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.config = directory / "sentinel.conf"
        self.config.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {directory}\n"
            f"sentinel monitor {MASTER} 127.0.0.1 {primary_port} 2\n"
            f"sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n"
            f"sentinel failover-timeout {MASTER} {FAILOVER_TIMEOUT_MS}\n"
            f"sentinel parallel-syncs {MASTER} 1\n"
        )
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with (self.directory / "sentinel.log").open("ab") as log:
            self._process = subprocess.Popen(
                [shutil.which("redis-server") or "redis-server", str(self.config), "--sentinel"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout=10)

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=2, socket_connect_timeout=1)


class SentinelSet(Processes):
    """A primary, its replicas and three sentinels watching them as MASTER. Two replicas by
    default: once one is promoted the other follows it at once, so REDIS_MIN_REPLICAS=1 is
    met again without waiting for the dead primary to come back."""

    def __init__(self, directory: Path | str, replicas: int = 2) -> None:
        directory = Path(directory)
        self.nodes = [RedisServer(directory / f"node{n}") for n in range(1 + replicas)]
        self.sentinels = [
            Sentinel(directory / f"sentinel{n}", self.nodes[0].port) for n in range(SENTINELS)
        ]

    @property
    def setting(self) -> str:
        """REDIS_SENTINELS for the service."""
        return ",".join(f"127.0.0.1:{sentinel.port}" for sentinel in self.sentinels)

    def start(self) -> None:
        for node in self.nodes:
            node.start()
        for node in self.nodes[1:]:
            with node.client() as replica:
                replica.replicaof("127.0.0.1", self.nodes[0].port)
        for sentinel in self.sentinels:
            sentinel.start()
        self.wait_until_watched()

    def stop(self) -> None:
        for sentinel in self.sentinels:
            sentinel.stop()
        for node in self.nodes:
            node.stop()

    def primary(self) -> RedisServer:
        """The node the sentinels name as the primary now."""
        with self.sentinels[0].client() as sentinel:
            _, port = sentinel.sentinel_get_master_addr_by_name(MASTER)
        return next(node for node in self.nodes if node.port == int(port))

    def wait_until_watched(self) -> None:
        """Every sentinel knows the primary, its replica (in sync) and the other sentinels:
        a failover can happen from now on."""
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if all(self._watching(sentinel) for sentinel in self.sentinels):
                return
            time.sleep(0.2)
        raise TimeoutError(f"the sentinels did not agree within {READY_TIMEOUT:g} s")

    def _watching(self, sentinel: Sentinel) -> bool:
        try:
            with sentinel.client() as client:
                master = client.sentinel_master(MASTER)
                replicas = client.sentinel_slaves(MASTER)
        except redis.RedisError:
            return False
        return (
            master.get("num-other-sentinels") == SENTINELS - 1
            and master.get("num-slaves") == len(self.nodes) - 1
            and all(replica.get("master-link-status") == "ok" for replica in replicas)
            and not master.get("is_sdown")
            and not master.get("is_odown")
        )

    def wait_for_failover(self, old: RedisServer) -> RedisServer:
        """After `old` died: the replica the sentinels promoted, once it is a primary."""
        deadline = time.monotonic() + FAILOVER_SECONDS
        while time.monotonic() < deadline:
            try:
                promoted = self.primary()
            except (redis.RedisError, StopIteration):
                promoted = old
            if promoted is not old:
                with promoted.client() as client:
                    if client.info("replication")["role"] == "master":
                        return promoted
            time.sleep(0.2)
        raise TimeoutError(f"no failover within {FAILOVER_SECONDS:g} s")
