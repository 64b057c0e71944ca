"""The session as the hosted core holds it: the store's record read once into typed values
(its game state, its seats, its live record), and the latest of them this process knows."""

import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any

import orjson

from engine.game import Game, get_game
from service.store import Session, SessionStore

HUMAN = "human"
BOT = "bot"
MAX_SPECTATORS = 16
DEFAULT_TIMEOUT_LEVEL = "greedy"


@dataclass(frozen=True, slots=True)
class Seat:
    """A seat: a human's (with its token's digest) or a bot's (with its level)."""

    kind: str
    token: str | None = None
    level: str | None = None

    @classmethod
    def human(cls, token_digest: str) -> "Seat":
        return cls(HUMAN, token=token_digest)

    @classmethod
    def bot(cls, level: str) -> "Seat":
        return cls(BOT, level=level)

    @classmethod
    def read(cls, data: dict[str, Any]) -> "Seat":
        if data["type"] == HUMAN:
            return cls.human(data["token"])
        return cls.bot(data["level"])

    def write(self) -> dict[str, Any]:
        if self.kind == HUMAN:
            return {"type": HUMAN, "token": self.token}
        return {"type": BOT, "level": self.level}


def write_seats(seats: tuple[Seat, ...]) -> str:
    return orjson.dumps([seat.write() for seat in seats]).decode()


@dataclass(frozen=True, slots=True)
class Live:
    """What a session keeps beside its game state for live play."""

    turn_seconds: int | None = None
    timeout_level: str = DEFAULT_TIMEOUT_LEVEL
    absent_after: int | None = None
    spectators: tuple[str, ...] = ()  # SHA-256 of each spectator token
    deadline: float | None = None  # when the seat to move runs out of time (epoch seconds)
    timeouts: tuple[int, ...] = ()  # per seat: timeouts in a row
    absent: tuple[int, ...] = ()
    time_bank: int | None = None  # seconds each seat may spend beyond turn_seconds in all
    banks: tuple[float, ...] = ()  # per seat: what is left of its time bank
    turn_began: float | None = None  # when the seat to move was given its turn
    # Server play (bots, absent seats) left over by a bounded step: due at once, continued
    # by the next timer scan or reader through the same compare-and-set.
    resume_at: float | None = None

    @classmethod
    def loads(cls, text: str) -> "Live":
        data = orjson.loads(text or "{}")
        for name in ("spectators", "timeouts", "absent", "banks"):
            data[name] = tuple(data.get(name, ()))
        return cls(**data)

    def dumps(self) -> str:
        # orjson writes a dataclass itself, field by field, as asdict() would have it:
        # twenty times faster, and it is written with every commit.
        return orjson.dumps(self).decode()

    def with_(self, **changes: Any) -> "Live":
        """This record with `changes`; itself when they change nothing, as on most moves of
        an untimed match, so that its stored text is not written again (commit.played_on)."""
        if all(getattr(self, name) == value for name, value in changes.items()):
            return self
        return replace(self, **changes)

    def bank_of(self, seat: int) -> float:
        """What is left of `seat`'s time bank (0 without one)."""
        return self.banks[seat] if seat < len(self.banks) else 0.0

    @property
    def due_at(self) -> float | None:
        """When the session next needs the server: its turn deadline or its resumed play."""
        if self.resume_at is None:
            return self.deadline
        return self.resume_at if self.deadline is None else min(self.deadline, self.resume_at)

    def due(self, now: float) -> bool:
        """Whether the turn timer has run out or server play waits to be resumed."""
        return self.due_at is not None and now >= self.due_at

    def spent(self, seat: int, now: float) -> "Live":
        """`seat` moved at `now`: the time beyond turn_seconds comes out of its bank."""
        if not self.banks or self.turn_began is None or self.turn_seconds is None:
            return self
        over = max(0.0, now - self.turn_began - self.turn_seconds)
        banks = list(self.banks)
        banks[seat] = round(max(0.0, banks[seat] - over), 3)
        return replace(self, banks=tuple(banks))

    def timed_out(self, seat: int, seats: int) -> "Live":
        """One more timeout of `seat` in a row; absent once there are `absent_after`."""
        timeouts = list(self.timeouts or (0,) * seats)
        timeouts[seat] += 1
        absent = set(self.absent)
        if self.absent_after is not None and timeouts[seat] >= self.absent_after:
            absent.add(seat)
        banks = list(self.banks)
        if banks:
            banks[seat] = 0.0  # its time ran out: its bank with it
        return replace(
            self, timeouts=tuple(timeouts), absent=tuple(sorted(absent)), banks=tuple(banks)
        )

    def present(self, seat: int) -> "Live":
        """`seat` moved or used its token: present, its run of timeouts over."""
        timeouts = list(self.timeouts)
        if seat < len(timeouts):
            timeouts[seat] = 0
        return self.with_(
            timeouts=tuple(timeouts), absent=tuple(s for s in self.absent if s != seat)
        )

    def turn_of(self, seat: int | None, now: float) -> "Live":
        """`seat` (None: nobody) is given its turn at `now`: its deadline, when timed."""
        if self.turn_seconds is None or seat is None:
            return self.with_(deadline=None, turn_began=None, resume_at=None)
        began = round(now, 3)
        deadline = round(began + self.turn_seconds + self.bank_of(seat), 3)
        return self.with_(deadline=deadline, turn_began=began, resume_at=None)

    def resumed(self, now: float) -> "Live":
        """Server play is left over at `now`: no seat's turn runs; it is due at once."""
        return replace(self, deadline=None, turn_began=None, resume_at=round(now, 3))


@dataclass(frozen=True, slots=True)
class Meta:
    """What a session is created with and keeps unchanged: the integrator that owns it (None
    when creation is open), when it was created (epoch seconds), its webhook (as
    service.hosted.webhooks.Webhook writes it; None for none)."""

    owner: str | None = None
    created_at: float = 0.0
    webhook: dict[str, Any] | None = None

    @classmethod
    def loads(cls, text: str) -> "Meta":
        return cls(**orjson.loads(text or "{}"))

    def dumps(self) -> str:
        return orjson.dumps(self).decode()


@dataclass(frozen=True, slots=True)
class Record:
    """A session at one version, read: states are values, so one version of one session
    always has the same record, and it may be kept and shared."""

    id: str
    game: Game
    version: int
    epoch: int
    seats: tuple[Seat, ...]
    state: Any
    live: Live
    live_text: str  # the live record as stored: what a compare-and-set on it names
    meta: Meta = Meta()

    @classmethod
    def read(cls, session: Session) -> "Record":
        game = get_game(session.game)
        return cls(
            id=session.id,
            game=game,
            version=session.version,
            epoch=session.epoch,
            seats=tuple(Seat.read(seat) for seat in orjson.loads(session.seats)),
            state=game.read(orjson.loads(session.state)),
            live=Live.loads(session.live),
            live_text=session.live,
            meta=Meta.loads(session.meta),
        )

    @property
    def to_move(self) -> int | None:
        return self.game.to_move(self.state)

    def state_text(self) -> str:
        return orjson.dumps(self.game.write(self.state)).decode()

    def token_digests(self) -> tuple[str | None, ...]:
        return tuple(seat.token for seat in self.seats)


class Recent:
    """The latest record this process knows of recent sessions. A move that names that
    version is checked and applied on it without reading the session back; the store's
    compare-and-set still decides, and any other outcome takes the authoritative path."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._known: OrderedDict[str, Record] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session_id: str) -> Record | None:
        with self._lock:
            return self._known.get(session_id)

    def put(self, record: Record) -> None:
        with self._lock:
            self._known[record.id] = record
            self._known.move_to_end(record.id)
            while len(self._known) > self.size:
                self._known.popitem(last=False)

    def drop(self, session_id: str) -> None:
        with self._lock:
            self._known.pop(session_id, None)


def load(store: SessionStore, session_id: str) -> Record | None:
    """The session as stored, read; None when there is none."""
    session = store.load(session_id)
    return None if session is None else Record.read(session)
