"""Real gunicorn with the production gunicorn.conf.py on a free local port, for tests and
benchmarks (stdlib only, so bench/ needs no test dependency to use it)."""

import http.client
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.redis_server import free_port

ROOT = Path(__file__).resolve().parents[1]
GUNICORN = Path(sys.executable).with_name("gunicorn")


@dataclass(frozen=True)
class Gunicorn:
    port: int
    log: Path
    pid: int  # the master's

    def workers(self) -> list[int]:
        """The worker processes' ids, read from /proc (Linux)."""
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # exited while being read
            if int(fields[1]) == self.pid:
                found.append(int(stat.parent.name))
        return found

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def gunicorn(
    log: Path,
    *options: str,
    ready: str = "/livez",
    within: float = 30.0,
    config: str = "gunicorn.conf.py",
    **settings: str,
) -> Iterator[Gunicorn]:
    """gunicorn -c `config` [options] with these environment settings (REDIS_URL only when
    given), its output in `log`; yields once `ready` answers 200, stops it on leaving."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    env.update(HOST="127.0.0.1", PORT=str(port), **settings)
    with log.open("w") as out:
        server = subprocess.Popen(
            [str(GUNICORN), "-c", config, *options],
            cwd=ROOT, env=env, stdout=out, stderr=out,
        )  # fmt: skip
    try:
        wait_until(port, ready, server, within)
        yield Gunicorn(port, log, server.pid)
    finally:
        server.terminate()
        server.wait(timeout=20)


def wait_until(port: int, path: str, server: subprocess.Popen, within: float) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited with status {server.returncode}")
        if answers(port, path):
            return
        time.sleep(0.1)
    raise TimeoutError(f"gunicorn did not answer GET {path} within {within:g} s")


def answers(port: int, path: str) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        connection.request("GET", path)
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False  # not listening yet, or the worker is still importing the app
    finally:
        connection.close()
