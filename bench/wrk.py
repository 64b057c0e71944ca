"""Load from wrk, the C load generator (Debian package `wrk`; `make bench` installs it):
closed-loop keep-alive connections POSTing a corpus of JSON bodies, or playing hosted
sessions move by move, measured in slices that add up, so loads taken in turn weigh alike
on the machine's changing load."""

import os
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import orjson

SCRIPT = Path(__file__).with_name("post.lua")
PLAY = Path(__file__).with_name("play.lua")
TIMEOUT_SECONDS = 30  # a request slower than this is an error, not a latency


@dataclass
class Load:
    """What wrk measured of one load, over every slice of it."""

    name: str
    requests: int = 0
    seconds: float = 0.0
    failures: int = 0  # answers other than 2xx/3xx, and socket errors or timeouts
    latencies: Counter = field(default_factory=Counter)  # microseconds -> times seen

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile(self, share: float) -> float:
        """The latency (ms) that `share` of the requests took at most."""
        wanted, seen = share * sum(self.latencies.values()), 0
        for micros in sorted(self.latencies):
            seen += self.latencies[micros]
            if seen >= wanted:
                return micros / 1000
        return 0.0


def installed() -> str:
    found = shutil.which("wrk")
    if found is None:
        raise SystemExit("wrk is missing: `make bench` installs it (apt-get install wrk)")
    return found


def post(
    load: Load,
    url: str,
    path: str,
    bodies: Path,
    connections: int,
    seconds: int,
    threads: int = 1,
) -> Load:
    """One slice: wrk POSTs the bodies (one a line) to `url` + `path` for `seconds` (wrk
    takes whole seconds) on `connections` connections from `threads` threads; its figures
    are added to `load`."""
    run(load, url, connections, threads, seconds, SCRIPT, path, str(bodies))
    return load


def play(
    load: Load, url: str, moves: Path, starts: list[int], connections: int, seconds: int
) -> list[int]:
    """One slice of hosted sessions: connection n (a thread of its own) plays the moves of
    `moves`/n.tsv in order from line starts[n] (bench/play.lua); its figures are added to
    `load`. Returns the line each connection would have played next."""
    starting = moves / "starts"
    starting.write_text("".join(f"{start}\n" for start in starts))
    figures = run(load, url, connections, connections, seconds, PLAY, str(moves), str(starting))
    return figures["turns"]


def run(load: Load, url: str, connections: int, threads: int, seconds: int,
        script: Path, *arguments: str) -> dict:  # fmt: skip
    """wrk with `script` and its arguments; its BENCH line's figures, added to `load`."""
    command = [
        installed(), f"-t{threads}", f"-c{connections}", f"-d{seconds}s",
        f"--timeout={TIMEOUT_SECONDS}s", "-s", str(script), url, "--", *arguments,
    ]  # fmt: skip
    with tempfile.TemporaryDirectory() as scratch:  # the gate of post.lua, closed
        gate = {"WRK_GATE": str(Path(scratch) / "open"), "WRK_THREADS": str(threads)}
        ran = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **gate})
    if ran.returncode:
        raise RuntimeError(f"{' '.join(command)} exited with {ran.returncode}: {ran.stderr}")
    line = next(line for line in ran.stdout.splitlines() if line.startswith("BENCH "))
    figures = orjson.loads(line.removeprefix("BENCH "))
    load.requests += figures["requests"]
    load.seconds += figures["microseconds"] / 1e6
    load.failures += figures["status_errors"] + figures["socket_errors"]
    load.latencies.update(dict(figures["latency"]))
    return figures


def body_file(path: Path, bodies: list[bytes]) -> Path:
    """The bodies, one a line (orjson writes no newline inside a body)."""
    path.write_bytes(b"".join(body + b"\n" for body in bodies))
    return path
