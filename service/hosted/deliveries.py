"""Delivering webhook messages: a background loop in every worker, at least once, in
version order per session, with exponential backoff, to public addresses only.

The outbox of a session (its messages, written by the commit that caused them) is the
truth; a schedule of sessions by when their outbox is next due (service.hosted.schedule,
the timers' kind: `cards:{webhooks}:due` on Redis) says where to look. A commit with
messages plans its session there before it is written (so a worker dying right after the
commit leaves it planned) and again after (so a deliverer that found the outbox empty just
before cannot settle it away). A deliverer claims due sessions with a lease (a worker that
dies holding one delays them by the lease, no more), sends each session's messages from its
head, and settles the session at its head's next attempt, or drops it once it is empty.

A message is sent only while it is the outbox's head, and the head goes only once it was
delivered or given up (a compare on its whole text): so no message is sent before the one
before it is done, even when two deliverers hold the same session after a lease ran out
(the price is a duplicate, which at-least-once allows; `webhook-id` tells them apart).
"""

import ipaddress
import logging
import socket
import threading
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import orjson
import requests

from service import metrics
from service.errors import invalid
from service.hosted.schedule import Schedule
from service.hosted.webhooks import signature
from service.store import SessionStore, StoreUnavailable

log = logging.getLogger("service.webhooks")

MOST_BYTES = 64 * 1024  # of a receiver's answer, read and dropped
CONCURRENT = 32  # sessions delivered at once by one worker
SCAN_SECONDS = 0.5  # how often a worker looks for due messages (a commit wakes it at once)


def public(address: str) -> bool:
    """Whether an IP address is a public one (not loopback, private, link-local, multicast,
    unspecified, reserved or shared); an IPv4-mapped IPv6 address as its IPv4 one."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def host_of(url: str) -> tuple[str, int]:
    """The URL's host (brackets off, lowercase) and port; ValueError for a URL that is not
    an absolute http or https one."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an absolute http or https URL")
    return parts.hostname.lower(), parts.port or (443 if parts.scheme == "https" else 80)


class Destinations:
    """Where webhooks may go: with an allow-list (WEBHOOK_HOSTS), its hosts only; else a
    host that resolves only to public addresses."""

    def __init__(self, hosts: str | None = None) -> None:
        self.hosts = frozenset(
            h.strip().lower().strip("[]") for h in (hosts or "").split(",") if h.strip()
        )

    def refusal(self, url: str) -> str | None:
        """Why `url` may not be sent to, None when it may."""
        try:
            host, port = host_of(url)
        except ValueError as error:
            return str(error)
        if self.hosts:
            return None if host in self.hosts else "its host is not in WEBHOOK_HOSTS"
        try:
            found = {
                info[4][0] for info in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
            }
        except (socket.gaierror, UnicodeError):
            return "its host does not resolve"
        if not found or not all(public(address) for address in found):
            return "its host must resolve to public addresses only"
        return None

    def check(self, url: str) -> None:
        """A 422 naming `webhook.url` when `url` may not be sent to."""
        why = self.refusal(url)
        if why is not None:
            raise invalid("webhook.url", why)


class Deliveries:
    """The delivery loop of one worker."""

    def __init__(
        self,
        store: SessionStore,
        schedule: Schedule,
        destinations: Destinations,
        retry: float,
        attempts: int,
        timeout: float,
        clock: Callable[[], float] = time.time,
        count: bool = False,
    ) -> None:
        self.store = store
        self.schedule = schedule
        self.destinations = destinations
        self.retry, self.attempts, self.timeout = retry, attempts, timeout
        self.clock = clock
        self.count = count
        self.http = requests.Session()
        self.http.trust_env = False  # no proxy from the environment: the address is checked
        self._wake = threading.Event()
        self._nudged: set[str] = set()  # sessions committed with messages in this worker
        self._nudged_lock = threading.Lock()
        # Sessions this worker's loop delivers right now (True: claimed again meanwhile), so
        # that it never runs two deliverers of one session at once.
        self._active: dict[str, bool] = {}
        self._active_lock = threading.Lock()
        self._stopping = threading.Event()
        self._slots = threading.BoundedSemaphore(CONCURRENT)
        self._loop: threading.Thread | None = None

    @property
    def lease(self) -> float:
        """A claim on a session lasts this long: beyond one attempt's bound."""
        return self.timeout + 5.0

    def planned(self, session_id: str) -> None:
        """A commit with messages for `session_id` is about to be written (or just was)."""
        self.schedule.plan(session_id, self.clock())

    def nudge(self, session_id: str) -> None:
        """`session_id` was just committed with messages in this worker: its loop plans it
        again (off the request's path) and delivers at once."""
        with self._nudged_lock:
            self._nudged.add(session_id)
        self._wake.set()

    def _plan_nudged(self) -> None:
        with self._nudged_lock:
            nudged, self._nudged = self._nudged, set()
        for session_id in nudged:
            self.planned(session_id)

    def deliver_due(self) -> int:
        """Plan the sessions nudged since, claim the due ones and deliver each (in the
        background when the loop runs); how many were claimed."""
        self._plan_nudged()
        claimed = self.schedule.claim(self.clock(), self.lease)
        for session_id, mark in claimed:
            if self._loop is None:
                self.deliver(session_id, mark)
                continue
            with self._active_lock:
                if session_id in self._active:
                    # This worker delivers it already: it reads the outbox once more.
                    self._active[session_id] = True
                    continue
                self._active[session_id] = False
            self._slots.acquire()
            worker = threading.Thread(target=self._deliver_freeing, args=(session_id, mark))
            worker.daemon = True
            worker.start()
        return len(claimed)

    def _deliver_freeing(self, session_id: str, mark: float) -> None:
        try:
            while True:
                self.deliver(session_id, mark)
                with self._active_lock:
                    if not self._active.pop(session_id, False):
                        return
                    self._active[session_id] = False
        finally:
            self._slots.release()

    def deliver(self, session_id: str, mark: float) -> None:
        """Send the session's due messages from its head, then settle its claim."""
        due: float | None = None
        try:
            while not self._stopping.is_set():
                head = self.store.outbox_head(session_id)
                if head is None:
                    break
                message = orjson.loads(head)
                if message["due"] > self.clock():
                    due = message["due"]
                    break
                self._attempt(session_id, head, message)
            else:
                due = self.clock()
            self.schedule.settle(session_id, mark, due)
        except StoreUnavailable as error:
            log.warning("webhook delivery postponed: %s", error)
        except Exception:  # one bad message must not stop the loop; its claim runs out
            log.exception("webhook delivery failed", extra={"session_id": session_id})

    def _attempt(self, session_id: str, head: str, message: dict) -> None:
        """One attempt at the head message: done (delivered or given up) or retried later."""
        delivered = self._send(message)
        tries = message["attempts"] + 1
        if delivered or tries >= self.attempts:
            outcome = "delivered" if delivered else "given_up"
            self.store.outbox_settle(session_id, head, None)
        else:
            outcome = "retried"
            later = {
                **message,
                "attempts": tries,
                "due": self.clock() + self.retry * 2 ** (tries - 1),
            }
            self.store.outbox_settle(session_id, head, orjson.dumps(later).decode())
        if self.count:
            metrics.WEBHOOK_DELIVERIES.labels(outcome).inc()
        if outcome == "given_up":
            log.warning(
                "webhook message given up", extra={"session_id": session_id, "attempts": tries}
            )

    def _send(self, message: dict) -> bool:
        """POST the message once: whether a 2xx came within the timeout. The destination is
        checked again first (DNS may have changed); no redirect is followed, and at most
        MOST_BYTES of the answer are read, within the same bound."""
        if self.destinations.refusal(message["url"]) is not None:
            return False
        body = message["body"].encode()
        stamp = int(time.time())  # the attempt's own time, as receivers check it
        headers = {
            "Content-Type": "application/json",
            "webhook-id": message["id"],
            "webhook-timestamp": str(stamp),
            "webhook-signature": signature(message["secret"], message["id"], stamp, body),
        }
        until = time.monotonic() + self.timeout
        try:
            with self.http.post(
                message["url"], data=body, headers=headers, timeout=self.timeout,
                allow_redirects=False, stream=True,
            ) as answer:  # fmt: skip
                read = 0
                for chunk in answer.iter_content(8192):
                    read += len(chunk)
                    if read >= MOST_BYTES or time.monotonic() > until:
                        break
                return 200 <= answer.status_code < 300 and time.monotonic() <= until
        except requests.RequestException:
            return False

    def start(self, every: float = SCAN_SECONDS) -> None:
        """Deliver in the background of this process (a thread, a greenlet under gevent)."""
        if self._loop is not None:
            return
        self._loop = threading.Thread(target=self._run, args=(every,), daemon=True)
        self._loop.name = "webhook-deliveries"
        self._loop.start()

    def _run(self, every: float) -> None:
        while not self._stopping.is_set():
            self._wake.wait(every)
            self._wake.clear()
            try:
                self.deliver_due()
            except Exception:  # the loop must outlive any one bad scan
                log.exception("webhook scan failed")

    def close(self) -> None:
        self._stopping.set()
        self._wake.set()
        self.schedule.close()
        self.http.close()


def follower(deliveries: Deliveries) -> Callable[..., None]:
    """A follower of commits: a commit with messages nudges this worker's loop, which plans
    its session again (off the request's path) and delivers at once."""

    def delivered_soon(facts) -> None:
        if facts.after.meta.webhook is not None and (facts.moved or facts.created):
            deliveries.nudge(facts.session_id)

    return delivered_soon
