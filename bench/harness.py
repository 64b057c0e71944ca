"""What the HTTP benchmarks share: closed-loop clients, the loads they put on the server in
slices taken in turn, what they measured and the table that reports it."""

import http.client
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

JSON = {"Content-Type": "application/json"}

# One request sent and its answer read: (seconds it took, answered as expected).
Send = Callable[[], tuple[float, bool]]


@dataclass
class Result:
    name: str
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    failures: int = 0
    # Requests answered on each connection (the n-th of every slice counted together):
    # unfair scheduling starves some.
    answered: list[int] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds

    @property
    def spread(self) -> float:
        """The most requests one connection had answered over the fewest (1.0 is perfectly
        fair; inf when one was never answered)."""
        fewest = min(self.answered, default=0)
        return max(self.answered) / fewest if fewest else float("inf")

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000


# A load put on the server for some seconds, adding what it measured to a Result.
Load = Callable[[float, Result], Result]


def post(
    connection: http.client.HTTPConnection, path: str, body: bytes, headers: dict[str, str]
) -> tuple[int, bytes]:
    connection.request("POST", path, body, headers)
    response = connection.getresponse()
    return response.status, response.read()


def closed_loop(senders: list[Send], seconds: float, result: Result) -> Result:
    """Closed loop: a thread per sender sends its next request as soon as the last answer
    is read. Adds to `result`, so slices taken in turn sum up."""
    stop = time.perf_counter() + seconds
    lock = threading.Lock()

    if len(result.answered) < len(senders):
        result.answered += [0] * (len(senders) - len(result.answered))

    def client(index: int, send: Send) -> None:
        latencies, failures = [], 0
        while time.perf_counter() < stop:
            latency, ok = send()
            latencies.append(latency)
            failures += not ok
        with lock:
            result.latencies += latencies
            result.failures += failures
            result.answered[index] += len(latencies)

    threads = [
        threading.Thread(target=client, args=(index, send)) for index, send in enumerate(senders)
    ]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.seconds += time.perf_counter() - began
    return result


def in_turn(loads: list[tuple[str, Load]], seconds: float, slices: int) -> list[Result]:
    """Every load for `seconds` in all, in `slices` short slices taken in turn, so a load
    that comes and goes on the machine weighs on each of them alike."""
    results = [Result(name) for name, _ in loads]
    for _ in range(slices):
        for result, (_, load) in zip(results, loads, strict=True):
            load(seconds / slices, result)
    return results


def report(
    results: list[Result], heading: str, width: int, rate: str, count: str | None = None
) -> None:
    """One row per result: rate, p50 and p99 latency, (the request count,) failures, and
    the spread of requests answered per connection."""
    counted = f"{count:>8}" if count else ""
    print(f"{heading:<{width}}{rate:>10}{'p50 ms':>10}{'p99 ms':>10}{counted}{'failed':>8}"
          f"{'spread':>8}")  # fmt: skip
    for result in results:
        counted = f"{len(result.latencies):>8}" if count else ""
        print(
            f"{result.name:<{width}}{result.rate:>10.0f}{result.percentile(0.5):>10.2f}"
            f"{result.percentile(0.99):>10.2f}{counted}{result.failures:>8}{result.spread:>8.1f}"
        )


def cpu_seconds(pids: list[int]) -> float:
    """The CPU time (user and system) these processes have used so far, from /proc (Linux)."""
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")
