"""Turn timers: a due timer is fired as a move by the session's timeout level, through the
commit path like any move (so of a human move and a timeout for one version exactly one
applies), by the scanner of any process or by a reader that finds it due."""

import logging
import math
import threading
import time

from service.hosted.commit import Commits, due_play
from service.hosted.records import Record, load
from service.logs import Outage
from service.store import Outcome, Schedule, SessionStore, StoreUnavailable

log = logging.getLogger("service.sessions")

# A claim on a due timer lasts this long: a process that dies holding one delays it no more.
TIMER_LEASE_SECONDS = 5.0


class Timers:
    def __init__(self, store: SessionStore, commits: Commits, schedule: Schedule, clock) -> None:
        self.store = store
        self.commits = commits
        self.schedule = schedule
        self.clock = clock
        self._scanner: threading.Thread | None = None
        self._stopping = threading.Event()
        self.outage = Outage(log, "turn timers")
        self.unfired_at = -math.inf  # when a claimed timer last failed to fire (monotonic)

    def fire_on(self, record: Record) -> Record | None:
        """`record` itself when nothing is due on it, the session after the timeout (or the
        next step of resumed server play) when this call committed it, None when another
        commit came first."""
        facts = due_play(record, self.clock)
        if facts is None:
            return record
        if self.commits.commit(facts).outcome is not Outcome.APPLIED:
            return None
        resumed = record.live.resume_at is not None
        log.info(
            "server play resumed" if resumed else "turn timer fired",
            extra={"session_id": record.id, "seat": record.to_move, "version": facts.version},
        )
        return facts.after

    def fire(self, session_id: str) -> float | None:
        """Play for the seat to move if its time has run out, or resume server play left
        over; when the session next needs the server after (None: never, or it is gone)."""
        for _ in range(3):
            record = load(self.store, session_id)
            if record is None:
                return None
            fired = self.fire_on(record)
            if fired is not None:
                return fired.live.due_at
        return record.live.due_at

    def fire_due(self) -> int:
        """One scan of the schedule: fire every due timer this process can claim; how many
        sessions it looked at. StoreUnavailable when the schedule or any of them could not
        be reached (after trying the others)."""
        claimed = self.schedule.claim(self.clock(), TIMER_LEASE_SECONDS)
        failure = None
        for session_id, mark in claimed:
            try:
                deadline = self.fire(session_id)
                self.schedule.settle(session_id, mark, deadline)
            except StoreUnavailable as error:
                # Its claim runs out and a later scan tries again; on a cluster, sessions
                # on the other masters fire meanwhile.
                failure = error
        if failure is not None:
            self.unfired_at = time.monotonic()
            raise failure
        return len(claimed)

    def start(self, every: float = 0.5) -> None:
        """Scan the schedule every `every` seconds in this process (a thread, a greenlet
        under gevent), so timers fire with nobody connected."""
        if self._scanner is not None:
            return
        self._scanner = threading.Thread(target=self._scan, args=(every,), daemon=True)
        self._scanner.name = "turn-timers"
        self._scanner.start()

    def _scan(self, every: float) -> None:
        while not self._stopping.wait(every):
            try:
                looked = self.fire_due()
            except StoreUnavailable as error:
                self.outage.failed(error)
            except Exception:  # the scanner must outlive any one bad scan
                log.exception("turn timer scan failed")
            else:
                # A scan that claimed nothing says only that the schedule answers: a timer
                # that failed to fire is claimed again once its lease runs out, and its next
                # attempt fails within another, so until then the outage lasts (else it
                # ended and began again every lease).
                if looked or time.monotonic() - self.unfired_at > 2 * TIMER_LEASE_SECONDS:
                    self.outage.succeeded()

    def close(self) -> None:
        """Stop the scanner, once a scan under way has settled what it claimed: a process
        that exits mid-scan holds its claims for TIMER_LEASE_SECONDS, and their timers fire
        that late."""
        self._stopping.set()
        if self._scanner is not None:
            self._scanner.join(TIMER_LEASE_SECONDS)
        self.schedule.close()
