"""The hosted-session calls the routes make: create, read, move, follow (long poll and
stream), spectator tokens, delete.

Checks on a move run in the contract's order: session (404), token (401), version (409),
turn (403), legality (422). Every write goes through the commit path (service.hosted.commit)
as one compare-and-set; a read writes only what the contract asks of it: a turn timer that
is due is fired, and an absent seat whose token is used is present again.
"""

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import orjson

from engine.game import get_game
from service import metrics, requests
from service.errors import KINDS, Problem, Unprocessable, invalid, json_paths
from service.hosted import commit, history
from service.hosted.answers import deal, move_answer, rfc3339, seat_answer
from service.hosted.commit import Commits, Follower, logged
from service.hosted.deliveries import Deliveries, Destinations
from service.hosted.follow import Follow, Gone, Messages, Signal
from service.hosted.hub import Hub, RedisHub
from service.hosted.problems import (
    EpochChanged,
    LiveChanged,
    StaleVersion,
    ahead,
    changing_too_fast,
    creation_in_progress,
    not_found,
    not_your_turn,
    rolled_back,
    spectator_limit,
    spectators_cannot,
    stale,
)
from service.hosted.records import (
    DEFAULT_TIMEOUT_LEVEL,
    MAX_SPECTATORS,
    Live,
    Meta,
    Recent,
    Record,
    Seat,
    load,
)
from service.hosted.timers import Timers
from service.hosted.tokens import (
    Unauthorized,
    bearer_token,
    checked_key,
    digest,
    fingerprint,
    holder_of,
    issued,
    key_reused,
    new_id,
    new_token,
    opened,
    sealed,
)
from service.hosted.webhooks import Webhook
from service.keys import Integrators
from service.schemas.envelopes import SessionMoveRequest
from service.store import (
    HOLD,
    MemorySchedule,
    Outcome,
    RedisSchedule,
    RedisStore,
    Schedule,
    SessionStore,
    StoreUnavailable,
    open_store,
)
from service.store.redis_store import channel, session_of_channel

log = logging.getLogger("service.sessions")
OPEN = Integrators()  # no keys: creation is open
# How many times a write (a move, a spectator token, a read's seat present again) is computed
# again on the session as stored when another writer changed its live record (not its
# version) first. Such changes at one version are few: a spectator token each
# (MAX_SPECTATORS in all), a seat present again, a timer stopped; so a request racing them
# is answered, never a 503 for losing to them (three tries were: a move among 40 spectator
# tokens being added lost to them one time in ten).
LIVE_TRIES = MAX_SPECTATORS + 5
# How long a creation may hold its Idempotency-Key before a retry may create in its place:
# longer than any creation takes (its bots' opening moves included).
CREATION_HOLD_SECONDS = 10.0

MOVE_REQUEST = SessionMoveRequest()  # built once: building a schema costs more than a load


class Sessions:
    """The hosted-session calls, on one store."""

    def __init__(
        self,
        store: SessionStore,
        commits: Commits,
        hub: Hub,
        timers: Timers,
        long_poll_seconds: float,
        ping_seconds: float,
        client_seeds: bool = False,
        metrics: bool = False,
        integrators: Integrators = OPEN,
        deliveries: Deliveries | None = None,
    ) -> None:
        """`client_seeds` lets a client choose the seed of a session with several human
        seats (tests, replays); otherwise only the server's secret seed deals those.
        `metrics` counts the waiting readers. With `integrators` configured, creating a
        session takes one's key, and the session is that integrator's."""
        self.integrators = integrators
        self.deliveries = deliveries
        self.store = store
        self.commits = commits
        self.hub = hub
        self.timers = timers
        self.clock = timers.clock
        self.long_poll_seconds = long_poll_seconds
        self.ping_seconds = ping_seconds
        self.client_seeds = client_seeds
        self.metrics = metrics

    # -- create ----------------------------------------------------------------------

    def create(
        self, body: Mapping[str, Any], key: str | None, authorization: str | None = None
    ) -> dict[str, Any]:
        """A new session (owned by the integrator whose key authorizes it, when keys are
        configured); with an Idempotency-Key, a retry gets the first answer."""
        owner = self.integrators.integrator(authorization) if self.integrators.required else None
        key = checked_key(key)
        if key is None:
            facts, answer = self._opening(body, owner)
            self.commits.commit(facts)
            return answer
        if owner is not None:
            key = f"{owner}:{key}"  # one integrator's keys are not another's
        mark, held = fingerprint("create", body), digest(key)
        # The key is claimed before the session is made, so that a retry never makes (and
        # commits, and announces to a webhook) a session of its own only to drop it.
        hold = f"{HOLD}{mark}:{new_token()}"
        for _ in range(2):
            earlier = self.store.remember_creation(held, hold, CREATION_HOLD_SECONDS)
            if earlier is None:
                break
            if earlier.startswith(HOLD):  # another request is creating under this key
                if not earlier.startswith(f"{HOLD}{mark}:"):
                    raise key_reused()
                raise creation_in_progress()
            kept = orjson.loads(opened(earlier, key) or "null")
            if kept is None:  # sealed under another key of the same digest: never in practice
                raise key_reused()
            if self.store.load(kept["answer"]["id"]) is not None:
                if kept["fingerprint"] != mark:
                    raise key_reused()
                return kept["answer"]
            # The earlier session has ended; its key went with it.
            self.store.forget_creation(held)
        else:
            raise creation_in_progress()  # another request claimed the key meanwhile
        try:
            facts, answer = self._opening(body, owner)
        except BaseException:  # nothing created: the key is free for a corrected request
            with contextlib.suppress(StoreUnavailable):  # else the hold expires by itself
                self.store.settle_creation(held, hold, None)
            raise
        # Sealed: the answer holds the seats' tokens, which are kept nowhere else in clear.
        stored = sealed(orjson.dumps({"fingerprint": mark, "answer": answer}).decode(), key)
        try:
            self.commits.commit(facts)
        finally:
            # Kept even when the commit's acknowledgement failed (a 503: it may have been
            # applied): a retry then finds this answer and whether its session exists.
            self.store.settle_creation(held, hold, stored)
        return answer

    def _opening(
        self, body: Mapping[str, Any], owner: str | None
    ) -> tuple[commit.Facts, dict[str, Any]]:
        """A new session's opening, checked and dealt but not yet committed, and the answer
        its creation gives."""
        game = get_game(body["game"])
        kinds = body["seats"]
        humans = sum(kind["type"] == "human" for kind in kinds)
        # Whoever chooses the seed knows every hand: with two or more human seats the seed
        # sent (checked, as any) gives way to one the server draws in secret, unless the
        # operator allows client seeds. The answer commits to the seed dealt from.
        fair = humans >= 2 and not self.client_seeds
        seed = requests.seed({} if fair else body)
        state = requests.new_state(game, body.get("rules"), len(kinds), seed)
        tokens = {seat: new_token() for seat, kind in enumerate(kinds) if kind["type"] == "human"}
        seats = tuple(
            Seat.human(digest(tokens[seat])) if seat in tokens else Seat.bot(kind["level"])
            for seat, kind in enumerate(kinds)
        )
        watchers = [new_token() for _ in range(body.get("spectators") or 0)]
        bank = body.get("time_bank")
        live = Live(
            turn_seconds=body.get("turn_seconds"),
            timeout_level=body.get("timeout_level") or DEFAULT_TIMEOUT_LEVEL,
            absent_after=body.get("absent_after"),
            spectators=tuple(digest(token) for token in watchers),
            timeouts=(0,) * len(seats),
            time_bank=bank,
            banks=(float(bank),) * len(seats) if bank else (),
        )
        hook = None
        if "webhook" in body:
            if self.deliveries is not None:
                self.deliveries.destinations.check(body["webhook"]["url"])
            hook = Webhook.new(body["webhook"]["url"], body["webhook"].get("events"))
        meta = Meta(
            owner=owner,
            created_at=round(self.clock(), 3),
            webhook=None if hook is None else hook.write(),
        )
        facts = commit.opening(new_id(), game, seats, state, live, self.clock, meta)
        return facts, {
            "id": facts.session_id,
            "game": game.name,
            "version": facts.version,
            "epoch": facts.epoch,
            "seats": [seat_entry(seat, kind, tokens.get(seat)) for seat, kind in enumerate(seats)],
            "spectators": [{"token": token} for token in watchers],
            "deal": deal(game, facts.after.state),
            **({} if hook is None else {"webhook": hook.write()}),
        }

    # -- read ------------------------------------------------------------------------

    def read(self, session_id: str, authorization: str | None) -> dict[str, Any]:
        """The session as the token's seat or spectator sees it; as its owner's key reads
        it: the spectator's answer with the seats and the owner. Every reader sees the
        webhook's url and events (never its secret): without API_KEYS a session has no
        owner, and its seats are the only ones who read it after its creation."""
        record, seat, owner = self.seated(session_id, authorization)
        answer = seat_answer(record, seat, self.clock())
        hook = Webhook.read(record.meta.webhook)
        if hook is not None:
            answer["webhook"] = hook.shown()
        if owner:
            answer.update(seats=seats_of(record), owner=record.meta.owner)
        return answer

    def listing(
        self, authorization: str | None, status: str | None, limit: int, cursor: str | None
    ) -> dict[str, Any]:
        """The key's integrator's sessions, newest first, `limit` a page, from `cursor`
        (the `next` of the page before); a session that is gone drops out."""
        owner = self.integrators.integrator(authorization)
        after = read_cursor(cursor)
        found: list[dict[str, Any]] = []
        while len(found) < limit:
            page = self.store.owned(owner, after, PAGE)
            if not page:
                after = None
                break
            ids = [session_id for _, session_id in page]
            sessions = self.store.peek(ids)
            # A session is listed just before it is written (on Redis): one not there yet
            # may be being created, and is dropped from the list only once it is older
            # than any creation takes.
            settled = self.clock() - CREATION_HOLD_SECONDS
            self.store.disown(owner, [
                session_id for (created, session_id), kept in zip(page, sessions)
                if kept is None and created < settled
            ])  # fmt: skip
            for (created, session_id), kept in zip(page, sessions):
                after = (created, session_id)
                if kept is None:
                    continue
                entry = listed(Record.read(kept), created, kept.updated_at)
                if status is None or entry["status"] == status:
                    found.append(entry)
                    if len(found) == limit:
                        break
        more = after is not None and bool(self.store.owned(owner, after, 1))
        return {"sessions": found, "next": write_cursor(after) if more else None}

    # -- move ------------------------------------------------------------------------

    def move(
        self,
        session_id: str,
        authorization: str | None,
        read_body: Callable[[], object],
        key: str | None,
        charge: Callable[[int], None] | None = None,
    ) -> dict[str, Any]:
        """Play the seat's move and the bots' replies as one compare-and-set. The body is
        read only after the session and token checks, in the contract's order. `charge`
        (the rate limits') is told, once the move is found legal, how many expert bots may
        reply to it, and refuses it (429) when that is over the client's costly limit."""
        call = MoveCall(session_id, authorization, read_body, key, charge)
        record = self.commits.recent.get(session_id)
        if record is not None:
            try:
                answer = self._move_on_recent(record, call)
            except LiveChanged:
                answer = None
            if answer is not None:
                return answer
        for _ in range(LIVE_TRIES):
            try:
                return self._move_as_stored(call)
            except LiveChanged:
                continue
        raise changing_too_fast()

    def _move_as_stored(self, call: "MoveCall") -> dict[str, Any]:
        record, seat, owner = self.seated(call.session_id, call.authorization)
        if owner:
            raise Problem.of(
                KINDS["seat-token-required"],
                "an integrator's key cannot move; only a seat's token can",
            )
        if seat is None:
            raise spectators_cannot("move")
        body = call.read_body()
        try:
            key = checked_key(call.key)
        except Unprocessable:  # a malformed key: a stale version is a 409 all the same
            check_version(record, body)
            raise
        mark = marked(seat, body, key)
        if key is not None:
            earlier = self.store.answer(call.session_id, digest(key))
            if earlier is not None:
                return replayed(earlier, mark)
        move = checked_move(record, seat, body)
        call.pay(record)
        return self.commit_move(record, seat, move, mark, key)

    def _move_on_recent(self, record: Record, call: "MoveCall") -> dict[str, Any] | None:
        """The move when it passes every check on the version this process knows, else
        None: then the caller runs the checks again on the session as stored (also when
        the store's epoch moved on: the state this process knows may be one it lost)."""
        if record.live.due(self.clock()):
            return None
        try:
            seat = holder_of(record.token_digests(), record.live.spectators,
                             bearer_token(call.authorization))  # fmt: skip
            if seat is None:
                return None
            checked_key(call.key)
            body = call.read_body()
            move = checked_move(record, seat, body)
        except Problem:
            return None
        call.pay(record)
        try:
            return self.commit_move(record, seat, move, marked(seat, body, call.key), call.key)
        except EpochChanged:
            return None

    def commit_move(
        self, record: Record, seat: int, move: Any, mark: str, key: str | None
    ) -> dict[str, Any]:
        """Commit `seat`'s checked move on `record` (`mark`: its request's fingerprint when
        it has an Idempotency-Key); the answer, or the problem the compare-and-set found."""
        facts = commit.seat_move(record, seat, move, self.clock)
        batches = [moved.events for moved in facts.moved]
        answer = move_answer(facts.after, seat, batches, self.clock())
        kept = None if key is None else orjson.dumps({"fingerprint": mark, "answer": answer})
        done = self.commits.commit(
            facts, None if key is None else digest(key), None if kept is None else kept.decode()
        )
        if done.outcome is Outcome.APPLIED:
            return answer
        if done.outcome is Outcome.GONE:
            raise not_found()
        if done.outcome is Outcome.REPLAY:
            return replayed(done.answer, mark)
        if done.epoch != record.epoch:
            raise EpochChanged(done.version, rolled_back(done.epoch, done.version))
        if done.version == record.version:
            raise LiveChanged()
        raise stale(done.version, record.version)

    # -- spectators --------------------------------------------------------------------

    def add_spectator(self, session_id: str, authorization: str | None) -> dict[str, str]:
        """A new spectator token, asked for by a seat. Of requests racing for the places
        left, each gets one (201) or finds them all taken (409): a lost compare-and-set is
        another writer's change applied, mostly another addition (LIVE_TRIES; five tries in
        all answered 23 of 40 racers a 503)."""
        for _ in range(LIVE_TRIES):
            record, seat, owner = self.seated(session_id, authorization)
            if seat is None and not owner:
                raise spectators_cannot("create spectator tokens")
            if len(record.live.spectators) >= MAX_SPECTATORS:
                raise spectator_limit(MAX_SPECTATORS)
            token = new_token()
            live = replace(record.live, spectators=(*record.live.spectators, digest(token)))
            if self._change_live(record, live):
                return {"token": token}
        raise changing_too_fast()

    def _change_live(self, record: Record, live: Live) -> bool:
        """Write a new live record at the same version; False when the session changed."""
        outcome = self.commits.commit(commit.live_change(record, live)).outcome
        if outcome is Outcome.GONE:
            raise not_found()
        return outcome is Outcome.APPLIED

    # -- follow ------------------------------------------------------------------------

    def events(
        self, session_id: str, authorization: str | None, after: int, gone: Gone | None = None,
        address: str = "",
    ) -> list[dict[str, Any]]:  # fmt: skip
        """The events after version `after` as the token's seat may see them; waits for some
        up to the long-poll bound. `address` is the client's, whose readers are capped."""
        until = time.monotonic() + self.long_poll_seconds
        with self._follow(session_id, authorization, after, until, gone, address) as follow:
            for news in follow:
                if news is Signal.ENDED:
                    raise not_found()
                if news is not Signal.QUIET:
                    events = [event for batch in news for event in batch]
                    if events:
                        return events
        return []

    def stream(
        self,
        session_id: str,
        authorization: str | None,
        after: int | None,
        gone: Gone | None = None,
        address: str = "",
    ) -> Iterator[str]:
        """The session's event stream as the token's reader may see it: the checks (and the
        reader's admission) run now, the messages as the returned iterator is read; closing
        it frees the reader's place."""
        return Messages(self._follow(session_id, authorization, after, None, gone, address))

    def _follow(
        self,
        session_id: str,
        authorization: str | None,
        after: int | None,
        until: float | None,
        gone: Gone | None,
        address: str = "",
    ) -> Follow:
        record, seat, owner = self.seated(session_id, authorization)
        polling = until is not None
        every = self.long_poll_seconds if polling else self.ping_seconds
        token = bearer_token(authorization)
        # A key follows each session of its integrator as that session's spectator would:
        # its readers are capped per session, not across every match the backend runs.
        holder = digest(f"{session_id}:{token}" if owner else token)
        start = record.version if after is None else after
        gauge = (metrics.LONG_POLLS if polling else metrics.STREAMS) if self.metrics else None
        # Either looks whether the session expired at least every ping_seconds.
        return Follow(self.hub, self.timers, record, seat, holder, start, every, until, gone, gauge,
                      look=self.ping_seconds, address=address)  # fmt: skip

    # -- the match record ------------------------------------------------------------

    def match_record(self, session_id: str, authorization: str | None) -> dict[str, Any]:
        """The match record, for any token of the session or its owner's key; a finished
        match's record also once the session is gone (its head keeps who may read it)."""
        try:
            # `seated`, not `authorized`: an absent seat is present again once its token is
            # used on any session endpoint, this one included.
            record, _, _ = self.seated(session_id, authorization)
        except Problem as error:
            if error.status != 404 or not issued(session_id):
                raise
            record = None
        items = self.store.record(session_id) if issued(session_id) else None
        if items is None:
            raise not_found()
        kept = [orjson.loads(item) for item in items]
        if record is None:
            self._may_read(kept[0][history.ACCESS], session_id, authorization)
        return history.answer(kept, record)

    def _may_read(self, access: dict[str, Any], session_id: str, authorization: str | None) -> None:
        """401 unless a token of the session or its owner's key (another's: 404)."""
        token = bearer_token(authorization)
        try:
            holder_of(tuple(access["tokens"]), tuple(access["spectators"]), token)
        except Unauthorized:
            owner = self.integrators.owner_of_key(token)
            if owner is None:
                raise
            if owner != access["owner"]:
                raise not_found() from None

    # -- delete ----------------------------------------------------------------------

    def delete(self, session_id: str, authorization: str | None) -> None:
        _, seat, owner = self.authorized(session_id, authorization)
        if seat is None and not owner:
            raise spectators_cannot("end the session")
        self.commits.recent.drop(session_id)
        if not self.store.delete(session_id):
            raise not_found()
        log.info("session ended", extra={"session_id": session_id})
        self.hub.ended(session_id)

    # -- the checks every call starts with -----------------------------------------------

    def seated(self, session_id: str, authorization: str | None) -> tuple[Record, int | None, bool]:
        """The session as stored, the token's seat (None: a spectator or the owner) and
        whether the owner's key it is, after what the contract asks of a read: a due turn
        timer fired (or a step of server play left over resumed), an absent seat present
        again. A read fires what is due once at most: when another commit came first (the
        timer scanner, playing the same step of a long run of server play), the read answers
        what it wrote instead of computing the next step to race it again, which cost every
        reader a step of bot play and, past five lost races, a 503. A seat written present
        again that lost to another change of the live record tries again (LIVE_TRIES)."""
        fire = True
        for _ in range(LIVE_TRIES):
            record, seat, owner = self.authorized(session_id, authorization)
            if fire:
                fired = self.timers.fire_on(record)
                if fired is None:
                    fire = False  # another commit came first: read what it wrote
                    continue
                record = fired  # at most one timeout or step of server play per read
            if seat is not None and seat in record.live.absent:
                self._change_live(record, record.live.present(seat))
                continue
            self.commits.recent.put(record)
            return record, seat, owner
        raise changing_too_fast()

    def authorized(
        self, session_id: str, authorization: str | None
    ) -> tuple[Record, int | None, bool]:
        """The session as stored (404 when there is none), the token's seat (401; None for
        a spectator token or the owner's key) and whether it is the owner's key (another
        integrator's key: 404, as for a session that does not exist). Writes nothing."""
        record = load(self.store, session_id) if issued(session_id) else None
        if record is None:
            self.commits.recent.drop(session_id)
            raise not_found()
        token = bearer_token(authorization)
        try:
            return record, holder_of(record.token_digests(), record.live.spectators, token), False
        except Unauthorized:
            owner = self.integrators.owner_of_key(token)
            if owner is None:
                raise
            if owner != record.meta.owner:
                raise not_found() from None
            return record, None, True

    def hand_over(self, within: float) -> None:
        """This worker exits, its last request served: its timer scanner and webhook
        deliveries stop, and what they held goes back to their schedules for the workers
        that live on (within `within` seconds), not once its claims have run out."""
        self.timers.close()
        if self.deliveries is not None:
            self.deliveries.hand_over(within)

    def close(self) -> None:
        """Stop the scanner, wake every waiting reader, release connections."""
        self.timers.close()
        if self.deliveries is not None:
            self.deliveries.close()
        self.hub.close()
        self.store.close()


@dataclass(slots=True)
class MoveCall:
    """A move request as the route hands it over (its body read only when asked for), and
    whether it has paid for its session's expert bots (a move retried on the session as
    stored pays once)."""

    session_id: str
    authorization: str | None
    read_body: Callable[[], object]
    key: str | None
    charge: Callable[[int], None] | None = None
    paid: bool = False

    def pay(self, record: Record) -> None:
        """Charge the client once for the expert bots of `record` (each may search before
        the next human turn); a 429 raised here comes before anything is computed."""
        experts = sum(seat.level == "expert" for seat in record.seats)
        if self.charge is not None and experts and not self.paid:
            self.charge(experts)
            self.paid = True


def read_version(body: object) -> int:
    if not isinstance(body, dict):
        raise invalid("body", "must be an object with 'move' and 'version'")
    version = body.get("version")
    if type(version) is not int or version < 0:
        raise invalid("version", "must be the session's current version, an integer >= 0")
    return version


def check_version(record: Record, body: object) -> None:
    """A 409 unless the body names the session's current version (a 422 when it names
    none): a stale version is a 409 whatever else is wrong with the move."""
    version = read_version(body)
    if version != record.version:
        if version > record.version:
            raise StaleVersion(record.version, ahead(record.epoch, record.version, version))
        raise stale(record.version, version)


def checked_move(record: Record, seat: int, body: dict[str, Any]) -> Any:
    """The contract's checks after session and token: version, turn, then legality."""
    check_version(record, body)
    if record.to_move != seat:
        raise not_your_turn(record.game, record.state, seat)
    # `version` is read; a body holding only it and an object `move` has nothing more for
    # the envelope to check (the game reads the move in depth), anything else it names.
    clean = len(body) == 2 and type(body.get("move")) is dict
    errors = None if clean else MOVE_REQUEST.validate(body)
    if errors:
        raise Unprocessable(json_paths(errors))
    return requests.read_move(record.game, record.state, body["move"])


def marked(seat: int, body: object, key: str | None) -> str:
    """A move request's fingerprint, kept with its answer under its Idempotency-Key; a
    request without a key has none to be told apart by (a SHA-256 of its body saved)."""
    return "" if key is None else fingerprint("move", seat, body)


def replayed(stored: str, mark: str) -> dict[str, Any]:
    kept = orjson.loads(stored)
    if kept["fingerprint"] != mark:
        raise key_reused()
    return kept["answer"]


PAGE = 100  # the owner's list is read this many ids at a time
STATUSES = ("playing", "match_over")


def seats_of(record: Record) -> list[dict[str, Any]]:
    """Who sits where, as the owner reads it: never a token."""
    absent = set(record.live.absent)
    return [
        {"seat": seat, "type": kind.kind, **({"level": kind.level} if kind.level else {}),
         "absent": seat in absent}
        for seat, kind in enumerate(record.seats)
    ]  # fmt: skip


def listed(record: Record, created: float, updated: float) -> dict[str, Any]:
    """A session as its owner's list shows it."""
    over = record.game.outcome(record.state) is not None
    return {
        "id": record.id,
        "game": record.game.name,
        "status": STATUSES[over],
        "version": record.version,
        "created_at": rfc3339(created),
        "updated_at": rfc3339(updated or created),
        "to_move": record.to_move,
        "seats": seats_of(record),
    }


def write_cursor(after: tuple[float, str]) -> str:
    """Where the next page starts: after this (created_at in ms, id)."""
    return f"{round(after[0] * 1000)}.{after[1]}"


def read_cursor(cursor: str | None) -> tuple[float, str] | None:
    if cursor is None:
        return None
    millis, _, session_id = cursor.partition(".")
    created = requests.decimal(millis)
    if created is None or not issued(session_id):
        raise invalid("query.cursor", "must be the 'next' of an earlier page, as it was answered")
    return created / 1000, session_id


def seat_entry(seat: int, kind: Seat, token: str | None) -> dict[str, Any]:
    if token is not None:
        return {"seat": seat, "type": "human", "token": token}
    return {"seat": seat, "type": "bot", "level": kind.level}


def open_sessions(config: Mapping[str, Any], clock=time.time) -> Sessions:
    """Hosted sessions as service.config's settings ask: on Redis when REDIS_URL (or
    REDIS_SENTINELS) is set (shared by every process), else in this process. `clock` tells
    the time turn timers run on (the epoch's seconds)."""
    store = open_store(config)
    caps = (int(config["MAX_WAITERS"]), int(config["MAX_WAITERS_PER_TOKEN"]))
    per_address = config["MAX_WAITERS_PER_ADDRESS"]
    per_address = None if per_address is None else int(per_address)
    if isinstance(store, RedisStore):
        subscriber = store.subscriber
        hub: Hub = RedisHub(store, *caps, subscriber, channel, session_of_channel,
                            max_per_address=per_address)  # fmt: skip
        schedule: Schedule = store.schedule(RedisSchedule.KEY)
    else:
        hub, schedule = Hub(store, *caps, per_address), MemorySchedule()
    deliveries = Deliveries(
        store,
        store.outbox_schedule,
        Destinations(config["WEBHOOK_HOSTS"]),
        retry=float(config["WEBHOOK_RETRY_SECONDS"]),
        attempts=int(config["WEBHOOK_ATTEMPTS"]),
        timeout=float(config["WEBHOOK_TIMEOUT_SECONDS"]),
        clock=clock,
        count=bool(config["METRICS"]),
    )
    followers: list[Follower] = [hub.committed, logged]
    if config["METRICS"]:
        followers.append(metrics.count_commit)
    commits = Commits(store, schedule, Recent(), followers, clock, deliveries)
    return Sessions(
        store,
        commits,
        hub,
        Timers(store, commits, schedule, clock),
        long_poll_seconds=float(config["LONG_POLL_SECONDS"]),
        ping_seconds=float(config["STREAM_PING_SECONDS"]),
        client_seeds=bool(config["CLIENT_SEEDS"]),
        metrics=bool(config["METRICS"]),
        integrators=Integrators.parse(config["API_KEYS"]),
        deliveries=deliveries,
    )
