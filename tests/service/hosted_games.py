"""Whole hosted games over real HTTP for the operations tests: clients that retry a move with
its Idempotency-Key through 503s and dropped connections, and that keep every answer they
saw acknowledged, so a test can check the session against them afterwards."""

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from tests.service.sessions_client import chosen, create

UNAVAILABLE = 503
# A client gives up after this long without one answer that is not a 503 or an error: a
# bound on a test whose server never recovers, not a timing assertion.
GIVE_UP_SECONDS = 60.0


@dataclass
class Seen:
    """What one client saw: acknowledged moves (version -> card), statuses, retries."""

    acknowledged: dict[int, str] = field(default_factory=dict)
    statuses: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # connections dropped or refused
    retries: int = 0
    unavailable_without_retry_after: int = 0
    unavailable_at: list[float] = field(default_factory=list)  # time.monotonic() of each 503
    failed_at: list[float] = field(default_factory=list)  # ... of each dropped connection


@dataclass
class Hosted:
    base: str
    id: str
    tokens: dict[int, str]
    version: int
    seen: Seen = field(default_factory=Seen)

    def headers(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}


def start(base: str, seats: list[dict[str, Any]]) -> Hosted:
    """A new session dealt from the server's seed (client seeds are refused with two humans)."""
    answer = create(base, seats)
    assert answer.status_code == 201, answer.text
    body = answer.json()
    tokens = {entry["seat"]: entry["token"] for entry in body["seats"] if "token" in entry}
    return Hosted(base, body["id"], tokens, body["version"])


def patiently(hosted: Hosted, call: Callable[[], requests.Response]) -> requests.Response:
    """`call` until it answers something other than a 503; a 503 must carry Retry-After.
    Connection errors (a killed worker, a refused connect, an answer cut off mid-body) are
    retried the same way."""
    deadline = time.monotonic() + GIVE_UP_SECONDS
    while True:
        try:
            answer = call()
        except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as error:
            hosted.seen.errors.append(type(error).__name__)
            hosted.seen.failed_at.append(time.monotonic())
        else:
            hosted.seen.statuses.append(answer.status_code)
            if answer.status_code != UNAVAILABLE:
                return answer
            hosted.seen.unavailable_at.append(time.monotonic())
            if "Retry-After" not in answer.headers:
                hosted.seen.unavailable_without_retry_after += 1
        assert time.monotonic() < deadline, f"no answer but 503s/errors for {GIVE_UP_SECONDS} s"
        hosted.seen.retries += 1
        time.sleep(0.1)


def seat_view(hosted: Hosted, seat: int) -> dict[str, Any]:
    url = f"{hosted.base}/v1/sessions/{hosted.id}"
    answer = patiently(hosted, lambda: requests.get(url, headers=hosted.headers(seat), timeout=10))
    assert answer.status_code == 200, answer.text
    return answer.json()


def play_turn(hosted: Hosted, turn: int) -> bool:
    """One human move, retried under its Idempotency-Key until answered; False at the end."""
    views = {seat: seat_view(hosted, seat) for seat in hosted.tokens}
    movers = [seat for seat, view in views.items() if view["moves"]]
    if not movers:
        return False
    (seat,) = movers
    view = views[seat]
    move = chosen(view["moves"], turn)
    url = f"{hosted.base}/v1/sessions/{hosted.id}/moves"
    headers = {**hosted.headers(seat), "Idempotency-Key": f"{hosted.id}-{view['version']}"}
    body = {"move": move, "version": view["version"]}
    answer = patiently(hosted, lambda: requests.post(url, json=body, headers=headers, timeout=10))
    assert answer.status_code == 200, answer.text
    acknowledged = answer.json()
    hosted.seen.acknowledged[view["version"] + 1] = move["card"]
    hosted.version = acknowledged["version"]
    return True


def errors_logged(log: Path | None, most: int = 10) -> list[str]:
    """The last error lines of a server's log (a failure's cause, e.g. a 500's traceback)."""
    if log is None or not log.exists():
        return []
    return [line for line in log.read_text().splitlines() if '"level":"ERROR"' in line][-most:]


def play_out(hosted: Hosted, turns: int = 5000) -> Hosted:
    for turn in range(turns):
        if not play_turn(hosted, turn):
            break
    return hosted


def events(hosted: Hosted) -> list[dict[str, Any]]:
    url = f"{hosted.base}/v1/sessions/{hosted.id}/events"
    seat = next(iter(hosted.tokens))
    answer = patiently(
        hosted,
        lambda: requests.get(url, params={"after": 0}, headers=hosted.headers(seat), timeout=30),
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def check_history(hosted: Hosted) -> list[dict[str, Any]]:
    """Every acknowledged move is in the session's events exactly once at its version, and
    the versions run 1, 2, ... with no gap and no double. Returns the move events."""
    moves = [event for event in events(hosted) if event["type"] == "move"]
    versions = [event["version"] for event in moves]
    assert versions == list(range(1, len(versions) + 1)), versions
    assert versions[-1] == hosted.version
    by_version = {event["version"]: event["card"] for event in moves}
    for version, card in hosted.seen.acknowledged.items():
        assert by_version[version] == card, (version, card)
    return moves


@dataclass
class Load:
    """Concurrent hosted games, one client thread each, with a fault injected once enough
    moves have been acknowledged; what every client saw is kept for the checks."""

    base: str
    games: int = 6
    seats: list[dict[str, Any]] = field(
        default_factory=lambda: [{"type": "human"}, {"type": "bot", "level": "random"}]
    )
    played: list[Hosted] = field(default_factory=list)
    failures: list[BaseException] = field(default_factory=list)
    log: Path | None = None  # the server's, whose errors a failure shows


    def run(self, fault: Callable[[], float], after_moves: int = 60) -> float:
        """Play every game out, calling `fault` (which returns when it ended) mid-load;
        returns the time the fault ended."""
        self.played = [start(self.base, self.seats) for _ in range(self.games)]
        threads = [threading.Thread(target=self._play, args=(game,)) for game in self.played]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + GIVE_UP_SECONDS
        while self.acknowledged() < after_moves and time.monotonic() < deadline:
            time.sleep(0.05)
        ended = fault()
        for thread in threads:
            thread.join()
        assert not self.failures, (self.failures, errors_logged(self.log))
        return ended

    def _play(self, hosted: Hosted) -> None:
        try:
            play_out(hosted)
        except BaseException as failure:  # reported by run(), in the test's thread
            self.failures.append(failure)

    def acknowledged(self) -> int:
        return sum(len(game.seen.acknowledged) for game in self.played)

    def report(self, ended: float) -> dict[str, Any]:
        """The figures of a fault run: moves, retries, 503s and their window, recovery."""
        unavailable = sorted(t for game in self.played for t in game.seen.unavailable_at)
        failed = sorted(t for game in self.played for t in game.seen.failed_at)
        troubled = sorted(unavailable + failed)
        return {
            "acknowledged_moves": self.acknowledged(),
            "retries": sum(game.seen.retries for game in self.played),
            "answers_503": len(unavailable),
            "dropped_connections": len(failed),
            "seconds_of_503": round(unavailable[-1] - unavailable[0], 2) if unavailable else 0,
            "last_trouble_after_fault_end_s": round(troubled[-1] - ended, 2) if troubled else 0,
            "statuses": sorted({s for game in self.played for s in game.seen.statuses}),
        }
