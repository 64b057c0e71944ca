"""Helpers for live-play tests: an event-stream reader over real HTTP and a local replica of
a hosted match (to know, at each version, which cards nobody but their holder may see)."""

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
import requests

from engine.game import Game


@dataclass
class Message:
    id: int | None
    event: str | None
    data: str


@dataclass
class Stream:
    """One GET …/stream read in a thread: every byte kept, messages parsed as they come."""

    url: str
    token: str
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    raw: bytearray = field(default_factory=bytearray)
    messages: list[Message] = field(default_factory=list)
    pings: int = 0
    ping_times: list[float] = field(default_factory=list)  # monotonic, as each came
    status: int | None = None
    content_type: str | None = None
    closed: bool = False

    def __post_init__(self) -> None:
        self._changed = threading.Condition()
        self._response: requests.Response | None = None
        self._thread = threading.Thread(target=self._read, daemon=True)

    def __enter__(self) -> "Stream":
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        with self._changed:
            response = self._response
        if response is not None:
            response.close()
        self._thread.join(timeout=30)

    def _read(self) -> None:
        headers = {"Authorization": f"Bearer {self.token}", **self.headers}
        response = requests.get(
            f"{self.url}/stream", headers=headers, params=self.params, stream=True, timeout=60
        )
        with self._changed:
            self._response = response
            self.status = response.status_code
            self.content_type = response.headers.get("Content-Type")
            self._changed.notify_all()
        pending = b""
        try:
            for chunk in response.raw.stream(1024, decode_content=True):
                self.raw.extend(chunk)
                pending += chunk
                while b"\n\n" in pending:
                    block, pending = pending.split(b"\n\n", 1)
                    self._take(block.decode())
        except Exception:  # the test closed the response under the reader
            pass
        finally:
            with self._changed:
                self.closed = True
                self._changed.notify_all()

    def _take(self, block: str) -> None:
        fields: dict[str, str] = {}
        comment = False
        for line in block.split("\n"):
            if line.startswith(":"):
                comment = True
                continue
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
        with self._changed:
            if fields:
                number = fields.get("id")
                self.messages.append(
                    Message(int(number) if number else None, fields.get("event"), fields["data"])
                )
            elif comment:
                self.pings += 1
                self.ping_times.append(time.monotonic())
            self._changed.notify_all()

    def wait_for(self, check, within: float = 30.0) -> bool:
        """Wait (bounded) until check(self) holds; whether it does."""
        with self._changed:
            return self._changed.wait_for(lambda: check(self), within)

    def versions(self) -> list[int]:
        return [message.id for message in self.messages if message.event == "events"]

    def until_version(self, version: int, within: float = 30.0) -> list[Message]:
        assert self.wait_for(lambda s: version in s.versions() or s.closed, within), (
            f"version {version} never came; got {self.versions()}"
        )
        return list(self.messages)

    def events(self) -> list[dict[str, Any]]:
        return [
            event
            for message in self.messages
            if message.event == "events"
            for event in orjson.loads(message.data)
        ]


class Replica:
    """The same match kept locally from the same seed and moves: the full state the server
    holds, so a test knows which cards are hidden at each version."""

    def __init__(self, game: Game, rules: dict[str, Any], seats: int, seed: str) -> None:
        self.game = game
        self.states = [game.new(rules, seats, seed)]

    def play(self, move: dict[str, Any]) -> None:
        state = self.states[-1]
        self.states.append(self.game.apply(state, self.game.read_move(state, move))[0])

    def hidden(self, version: int) -> set[str]:
        """The cards in any hand or the stock at `version`."""
        written = self.game.write(self.states[version])
        return {card for hand in written["hands"] for card in hand} | set(written["stock"])
