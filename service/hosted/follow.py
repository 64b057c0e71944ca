"""One loop that follows a session for a reader: the long poll and the event stream both
are this loop, told how long to wait between looks and when to stop.

A follow is admitted when it is built (the hub's caps: 429 or 503 then) and releases its
place when it is closed, by its reader or by the server once the client went away: a
waiting reader looks every CHECK_SECONDS whether its client is still there.
"""

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from enum import Enum
from typing import Self

import orjson
from prometheus_client import Gauge

from engine.game import Events
from service.hosted.answers import seen_in
from service.hosted.hub import Hub
from service.hosted.records import Record
from service.hosted.timers import Timers
from service.store import StoreUnavailable

CHECK_SECONDS = 1.0  # a reader whose client went away is freed within this (and a bit)
RECONNECT_MS = 1000  # when a stream the server cuts short asks its client to come back
SHORTEST_WAIT = 0.05  # a due timer that could not be fired is looked at again after this

Gone = Callable[[], bool]


class Signal(Enum):
    QUIET = "quiet"  # a whole wait passed without a new version
    ENDED = "ended"  # the session was deleted or expired


class Follow:
    """The versions after `after` as `seat` may see them, as they are committed. Iterating
    yields the events of each new run of versions (one list per version), QUIET every
    `every` seconds whatever came between (a stream's ping), ENDED when the session ends
    (and then stops); it
    stops also at `until` (monotonic seconds), when the worker drains and when the client
    went away. A due turn timer is fired on the way."""

    def __init__(
        self,
        hub: Hub,
        timers: Timers,
        record: Record,
        seat: int | None,
        holder: str,
        after: int,
        every: float,
        until: float | None = None,
        gone: Gone | None = None,
        gauge: Gauge | None = None,
        look: float | None = None,
        address: str = "",
    ) -> None:
        """`gauge` (with METRICS on) counts this reader while it is admitted; `look` (seconds)
        bounds how long a wait goes without looking whether the session is still there (a
        session that expires publishes nothing): a long poll, whose QUIET comes only at its
        end, learns of the expiry then as soon as a stream would."""
        self.look = look
        self.hub, self.timers, self.record, self.seat = hub, timers, record, seat
        self.after, self.every, self.until = after, every, until
        self.gone = gone or (lambda: False)
        # When the next QUIET is due (monotonic): counted from the last one, not from the
        # last news, so that a stream's pings keep their bound however often versions come.
        self.quiet_at = time.monotonic() + every
        self._stack = ExitStack()
        self.watch = self._stack.enter_context(hub.watching(record, holder, address))
        if gauge is not None:
            gauge.inc()
            self._stack.callback(gauge.dec)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the reader's place (once; later calls do nothing)."""
        self._stack.close()

    def __iter__(self) -> Iterator[list[Events] | Signal]:
        try:
            yield from self._follow()
        finally:
            self.close()

    def _follow(self) -> Iterator[list[Events] | Signal]:
        watch, game = self.watch, self.record.game
        batches = watch.news(self.after)
        while True:
            if batches is None:
                yield Signal.ENDED
                return
            if batches:
                self.after += len(batches)
                yield [seen_in(game, self.seat, batch) for batch in batches]
            if self.hub.draining:
                return
            wait = self._next_wait()
            if wait is None:
                return
            changed = self._waited(wait)
            if changed is None:
                return
            watch.fire_if_due(self.timers)
            if changed:
                batches = watch.news(self.after)
            elif self.hub.store.exists(self.record.id):
                # Only whether it is still there: a read would keep an idle session alive.
                batches = []
            else:
                batches = None
            if batches is not None and time.monotonic() >= self.quiet_at:
                self.quiet_at = time.monotonic() + self.every
                yield Signal.QUIET

    def _next_wait(self) -> float | None:
        """How long the next wait lasts: until the next QUIET is due, or less until the turn
        timer runs out or the follow's end; None once the end has come."""
        wait = max(0.0, self.quiet_at - time.monotonic())
        if self.look is not None:
            wait = min(wait, self.look)
        if self.until is not None:
            wait = min(wait, self.until - time.monotonic())
            if wait <= 0:
                return None
        due = self.watch.due_in(self.timers.clock())
        return wait if due is None else max(SHORTEST_WAIT, min(wait, due))

    def _waited(self, seconds: float) -> bool | None:
        """Whether the session changed within `seconds`; None when the client went away
        (looked at every CHECK_SECONDS)."""
        until = time.monotonic() + seconds
        while True:
            left = until - time.monotonic()
            if self.watch.wait(min(left, CHECK_SECONDS)):
                return True
            if self.gone():
                return None
            if left <= CHECK_SECONDS:
                return False


class Messages:
    """An event stream's messages, read from a follow; closing it closes the follow (the
    server closes the response when its client went away)."""

    def __init__(self, follow: Follow) -> None:
        self.follow = follow
        self._messages = self._write()

    def __iter__(self) -> Iterator[str]:
        return self._messages

    def __next__(self) -> str:
        return next(self._messages)

    def close(self) -> None:
        self._messages.close()
        self.follow.close()

    def _write(self) -> Iterator[str]:
        yield ": ping\n\n"
        after = self.follow.after
        try:
            for news in self.follow:
                if news is Signal.ENDED:
                    yield "event: end\ndata: {}\n\n"
                    return
                if news is Signal.QUIET:
                    yield ": ping\n\n"
                else:
                    # A run of versions in one write: a stream resumed mid-match replays
                    # them all at once, and a client that reads the session once for the
                    # messages that came in together then reads it once, not per version.
                    messages = []
                    for events in news:
                        after += 1
                        data = orjson.dumps(events).decode()
                        messages.append(f"id: {after}\nevent: events\ndata: {data}\n\n")
                    yield "".join(messages)
        except StoreUnavailable:
            # The store out of reach: the stream ends here, whole, and its client comes back
            # with Last-Event-ID (an EventSource by itself, after `retry` ms). No log line or
            # traceback per stream: the outage is logged once, by the background loops.
            yield reconnect("the session store is unavailable")
            return
        if self.follow.hub.draining:
            # This worker stops (a deploy, a restart): the stream ends whole, and its client
            # comes back to a live worker, as after an outage.
            yield reconnect("this server is stopping")


def reconnect(why: str) -> str:
    """The last message of a stream the server cuts short: its client reconnects (with
    Last-Event-ID) after RECONNECT_MS, an EventSource by itself."""
    return f"retry: {RECONNECT_MS}\n: {why}; reconnect\n\n"
