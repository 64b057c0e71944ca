"""A throwaway redis-server on a free local port, for tests and benchmarks.

Never the system server on 6379: tests stop and restart this one.
"""

import os
import random
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Self

import redis

START_TIMEOUT = 10.0
START_ATTEMPTS = 3
# Where free ports are looked for: from here up to the kernel's ephemeral range.
LOWEST_PORT = 10000
EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
# Not the random module's own generator, which hypothesis seeds alike in every test worker.
PORTS = random.SystemRandom()
# Every port this process has handed out. A port is drawn before a server binds it (a
# cluster draws its twelve, nodes' and buses', before its first node starts), so a port
# drawn twice could be taken by one server while another was starting on it: a CI run saw a
# cluster node fail with "Address already in use" for seconds on end that way.
HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A loopback port nothing is bound to and this process has not handed out before, from
    this pytest-xdist worker's own share of the ports below the kernel's ephemeral range (a
    port of that range can become, between this look and a server's bind, the source port
    of any outgoing connection)."""
    lowest, highest = port_range()
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", PORTS.randint(lowest, highest) if highest > lowest else 0))
            except OSError:
                continue
            port = sock.getsockname()[1]
        if port not in HANDED_OUT:
            HANDED_OUT.add(port)
            return port


def port_range() -> tuple[int, int]:
    """The ports free_port() draws from: this worker's share of those from LOWEST_PORT to
    just below the kernel's ephemeral range (none off Linux: the kernel picks one)."""
    try:
        highest = int(EPHEMERAL.read_text().split()[0]) - 1
    except (OSError, ValueError, IndexError):  # not Linux: any port the kernel finds free
        highest = 0
    return worker_share(LOWEST_PORT, highest)


def worker_share(lowest: int, highest: int) -> tuple[int, int]:
    """The part of ports `lowest`..`highest` that is this pytest-xdist worker's (all of them
    outside xdist), so that two workers never draw the same port."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, ...
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or workers < 2 or highest <= lowest:
        return lowest, highest
    size = (highest - lowest + 1) // workers
    start = lowest + int(worker[2:]) * size
    return start, start + size - 1


class Processes:
    """A context manager of a group's start() and stop(): a start that fails half-way stops
    whatever it had started."""

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class RedisServer:
    """One redis-server process that keeps its port across stop() and start()."""

    def __init__(self, directory: Path | str, port: int | None = None, **options: str) -> None:
        """`options` are redis-server settings over the defaults below, e.g.
        appendonly="yes" (underscores read as dashes)."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError(
                "redis-server not found on PATH: run `make redis-server` "
                "(or apt-get install -y redis-server)"
            )
        self.binary = binary
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.log_path = self.directory / "redis.log"
        self._process: subprocess.Popen[bytes] | None = None
        self.options = {name.replace("_", "-"): value for name, value in options.items()}

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int:
        """The running server's process id."""
        assert self._process is not None, "not started"
        return self._process.pid

    def start(self) -> None:
        if self.running:
            return
        error = ""
        for attempt in range(START_ATTEMPTS):
            if attempt:
                time.sleep(0.5)
            error = self._try_start()
            if not error:
                return
        raise RuntimeError(
            f"redis-server did not start on port {self.port}: {error}\n{self._log_tail()}"
        )

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def pause(self) -> None:
        """SIGSTOP: the server keeps its connections open and answers nothing (a hung host)."""
        assert self._process is not None
        self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self._process is not None
        self._process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL: a crash, with no chance to write what it has not written yet."""
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=1)

    def __enter__(self) -> "RedisServer":
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _try_start(self) -> str:
        """Start the process and wait for it to answer; return "" or why it failed."""
        options = {
            "port": str(self.port),
            "bind": "127.0.0.1",
            "save": "",
            "appendonly": "no",
            "daemonize": "no",
            "dir": str(self.directory),
            **self.options,
        }
        args = [self.binary]
        for name, value in options.items():
            args += [f"--{name}", value]
        with self.log_path.open("ab") as log:
            process = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + START_TIMEOUT
        with self.client() as client:
            while time.monotonic() < deadline:
                if process.poll() is not None:
                    return f"exited with status {process.returncode}"
                try:
                    # Ours, not another server that already held the port.
                    if client.info("server")["process_id"] == process.pid:
                        self._process = process
                        return ""
                except redis.ConnectionError:
                    pass
                time.sleep(0.05)
        process.kill()
        process.wait()
        return f"no answer within {START_TIMEOUT:.0f} s"

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""
