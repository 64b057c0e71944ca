"""Delivering webhook messages: a background loop in every worker, at least once, in
version order per session, with exponential backoff, to public addresses only.

The outbox of a session (its messages, written by the commit that caused them) is the
truth; the store's outbox schedule (the timers' kind: `cards:{webhooks}:due` on Redis) says
where to look. A commit with messages into an empty outbox plans its session there with
them, in the same script (on a cluster, whose scripts keep to one slot, just before it),
already claimed by its own worker for a lease: a worker dying right after the commit leaves
it planned, and another finds it a lease later. The commit then hands the session to its
worker's loop with its messages, the whole outbox. A commit into an outbox that held
messages leaves the session's plan as it is (the commit of the first planned it, or its
deliverer's settle did) and hands nothing over: whoever delivers those finds these after
them. Every loop also claims the due sessions from the schedule every SCAN_SECONDS, with a
lease (a worker that dies holding one delays them by the lease, no more).

A deliverer reads the outbox (OUTBOX_READ messages at most) and sends them in order, on
connections kept alive per destination, up to the first that is not due or that fails;
then it settles what it did. A worker gathers its deliverers' settles for SETTLE_SECONDS
and writes them in one round trip; each settle answers the outbox after it, so that what
was committed meanwhile is sent next without a read of its own. Done, the deliverer
settles its claim at the head's next attempt, drops it when the outbox was empty, or
leaves it to run out when it emptied it.

A settle drops only the messages its pass is done with (delivered or given up: through the
last one, found by its whole text among the first) and rewrites the failed one for its
retry only while it is still the head. So no message is sent before every one before it
is done, even when two deliverers hold the same session after a lease ran out (the price is
a duplicate, which at-least-once allows; `webhook-id` tells them apart).
"""

import contextlib
import heapq
import ipaddress
import logging
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import orjson

from service import metrics
from service.errors import invalid
from service.hosted.webhooks import signature
from service.logs import Outage
from service.store import Schedule, SessionStore, Settle, StoreUnavailable

log = logging.getLogger("service.webhooks")

MOST_BYTES = 64 * 1024  # of a receiver's answer, read and dropped
CONCURRENT = 32  # sessions delivered at once by one worker
# A request's target and Host field are written as the URL has them: anything but visible
# ASCII there (a space, a control, a non-ASCII letter) could split or bend the request, so
# such a URL's attempts fail, as http.client refused them.
UNSAFE = re.compile(r"[^\x21-\x7e]")
OUTCOMES = ("delivered", "retried", "given_up")  # cards_webhook_deliveries_total's
SCAN_SECONDS = 0.5  # how often a worker looks for due messages (a commit wakes it at once)
# How long a worker gathers its deliverers' settles to write them in one round trip: a
# Redis call costs a worker more CPU than a POST, and a session that moves in the
# meantime is sent its next messages without a read of its own.
SETTLE_SECONDS = 0.01


# IPv6 forms whose last 32 bits are an IPv4 address that a packet to them can reach: the
# IPv4-compatible one (::/96, kept by some stacks and tunnels), SIIT's IPv4-translated one
# (::ffff:0:0:0/96) and NAT64's well-known prefix (a NAT64 gateway connects 64:ff9b::a00:1 to
# 10.0.0.1). Python's is_global judges the IPv6 address alone, and calls them all global.
CARRYING_IPV4 = (
    ipaddress.IPv6Network("::/96"),
    ipaddress.IPv6Network("::ffff:0:0:0/96"),
    ipaddress.IPv6Network("64:ff9b::/96"),
)
# Never public, though Python's is_global says so: the local-use NAT64 prefix (RFC 8215: it
# leads to whatever IPv4 network its operator chose) and site-local (IPv6's former private
# range, RFC 3879).
NOT_PUBLIC = (ipaddress.IPv6Network("64:ff9b:1::/48"), ipaddress.IPv6Network("fec0::/10"))


def public(address: str) -> bool:
    """Whether an IP address is a public one (not loopback, private, link-local, multicast,
    unspecified, reserved or shared); an IPv6 address that carries an IPv4 one (mapped,
    compatible, translated, 6to4, NAT64) as that IPv4 address."""
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(
        address.split("%", 1)[0]
    )
    if isinstance(ip, ipaddress.IPv6Address):
        if any(ip in network for network in NOT_PUBLIC):
            return False
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip.sixtofour is not None:
            ip = ip.sixtofour
        elif any(ip in network for network in CARRYING_IPV4):
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.is_global and not ip.is_multicast


Where = tuple[str, str, int, str]  # scheme, address to connect to, port, the URL's host


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

    def judge(self, url: str) -> tuple[Where | None, str | None]:
        """(where to connect, None) when `url` may be sent to, else (None, why not). The
        address is one the check resolved, so that a connection goes where the check looked
        even if the name resolves elsewhere a moment later; an allow-listed host is trusted
        as it is named."""
        try:
            host, port = host_of(url)
        except ValueError as error:
            return None, str(error)
        scheme = urlsplit(url).scheme
        if self.hosts:
            if host not in self.hosts:
                return None, "its host is not in WEBHOOK_HOSTS"
            return (scheme, host, port, host), None
        try:
            found = [
                info[4][0] for info in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
            ]
        except (socket.gaierror, UnicodeError):
            return None, "its host does not resolve"
        if not found or not all(public(address) for address in found):
            return None, "its host must resolve to public addresses only"
        return (scheme, found[0], port, host), None

    def check(self, url: str) -> None:
        """A 422 naming `webhook.url` when `url` may not be sent to."""
        why = self.judge(url)[1]
        if why is not None:
            raise invalid("webhook.url", why)


class Connection:
    """One HTTP/1.1 connection to a receiver, kept alive between messages: a request is
    written whole in one send and its answer read from the socket with a bound on time and
    size. Plain sockets rather than http.client: its request is two sends (head, then
    body), and its answer a buffered file and a parse of the head by the email package,
    which cost a worker more than the POST's own system calls."""

    def __init__(self, where: Where, tls: ssl.SSLContext | None) -> None:
        """To `where` (connected at its first exchange); `tls` checks an https receiver's
        certificate against the URL's host."""
        self.where, self.tls = where, tls
        self.sock: socket.socket | None = None
        self.answered = False  # some of an answer came on it

    def exchange(self, request: bytes, until: float) -> tuple[int, bool]:
        """Send `request` and read its answer by `until` (monotonic), at most MOST_BYTES:
        its status, and whether the connection may carry another request. OSError (a
        timeout included) when the connection failed, ValueError for an answer that is not
        HTTP/1."""
        self.answered = False
        if self.sock is None:
            scheme, address, port, host = self.where
            self.sock = socket.create_connection((address, port), timeout=left(until))
            if scheme == "https":
                assert self.tls is not None
                self.sock = self.tls.wrap_socket(self.sock, server_hostname=host)
        self.sock.settimeout(left(until))
        self.sock.sendall(request)
        answer = Reader(self.sock, until)
        try:
            status, fields, reusable = answer.head()
            while 100 <= status < 200:  # an interim answer: the final one follows
                status, fields, reusable = answer.head()
        except Enough as error:
            raise ValueError("an answer's head beyond MOST_BYTES") from error
        finally:
            self.answered = answer.read > 0
        try:
            if status in (204, 304):
                pass
            elif b"transfer-encoding" in fields:
                if not fields[b"transfer-encoding"].lower().endswith(b"chunked"):
                    answer.to_the_end()
                    return status, False
                answer.chunks()
            elif b"content-length" in fields:
                answer.skip(int(fields[b"content-length"]))
            else:  # the body lasts until the receiver closes
                answer.to_the_end()
                return status, False
        except Enough:
            return status, False
        return status, reusable and not answer.buffer

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def left(until: float) -> float:
    """The time left until `until` (monotonic); TimeoutError when none is."""
    remaining = until - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("no answer in WEBHOOK_TIMEOUT_SECONDS")
    return remaining


class Enough(Exception):
    """MOST_BYTES of an answer were read: the rest is left unread."""


class Reader:
    """An answer read from a socket: its head parsed, its body read and dropped."""

    def __init__(self, sock: socket.socket, until: float) -> None:
        self.sock, self.until = sock, until
        self.buffer = b""
        self.read = 0  # bytes received in all

    def more(self) -> bool:
        """Receive what comes next: False at the end of the stream."""
        if self.read >= MOST_BYTES:
            raise Enough
        self.sock.settimeout(left(self.until))
        data = self.sock.recv(65536)
        self.read += len(data)
        self.buffer += data
        return bool(data)

    def line(self) -> bytes:
        while (end := self.buffer.find(b"\r\n")) < 0:
            if not self.more():
                raise ConnectionError("the receiver closed the connection mid-answer")
        line, self.buffer = self.buffer[:end], self.buffer[end + 2 :]
        return line

    def head(self) -> tuple[int, dict[bytes, bytes], bool]:
        """The status, the header fields (names in lower case) and whether the receiver
        keeps the connection open after this answer."""
        version, _, rest = self.line().partition(b" ")
        if version not in (b"HTTP/1.1", b"HTTP/1.0") or not rest[:3].isdigit():
            raise ValueError("not an HTTP/1 answer")
        fields = {}
        while line := self.line():
            name, colon, value = line.partition(b":")
            if not colon:
                raise ValueError("not a header field")
            fields[name.strip().lower()] = value.strip()
        said = fields.get(b"connection", b"").lower()
        kept = b"close" not in said if version == b"HTTP/1.1" else b"keep-alive" in said
        return int(rest[:3]), fields, kept

    def skip(self, count: int) -> None:
        """Drop the next `count` bytes."""
        if count < 0:
            raise ValueError("a negative length")
        while len(self.buffer) < count:
            count -= len(self.buffer)
            self.buffer = b""
            if not self.more():
                raise ConnectionError("the receiver closed the connection mid-answer")
        self.buffer = self.buffer[count:]

    def chunks(self) -> None:
        """Drop a chunked body, its trailer fields included."""
        while size := int(self.line().split(b";", 1)[0], 16):
            self.skip(size + 2)
        while self.line():
            pass

    def to_the_end(self) -> None:
        """Drop what comes until the receiver closes."""
        while self.more():
            self.buffer = b""


class Connections:
    """Connections to receivers kept alive between messages, by where they go."""

    def __init__(self, most: int, tls: ssl.SSLContext | None = None) -> None:
        """`tls` checks receivers' certificates: the system's trust store unless given."""
        self.most = most  # idle ones kept per destination
        self._idle: dict[Where, list[Connection]] = {}
        self._lock = threading.Lock()
        self._tls = tls

    def take(self, where: Where) -> tuple[Connection, bool]:
        """A connection to `where`: an idle one (True) or a new one (False)."""
        with self._lock:
            idle = self._idle.get(where)
            if idle:
                return idle.pop(), True
        return self.new(where), False

    def new(self, where: Where) -> Connection:
        if where[0] == "https" and self._tls is None:
            self._tls = ssl.create_default_context()
        return Connection(where, self._tls)

    def give(self, where: Where, connection: Connection) -> None:
        """Keep `connection` (its answer read to the end) for the next message to `where`."""
        with self._lock:
            idle = self._idle.setdefault(where, [])
            if len(idle) < self.most:
                idle.append(connection)
                return
        connection.close()

    def clear(self) -> None:
        with self._lock:
            kept, self._idle = self._idle, {}
        for idle in kept.values():
            for connection in idle:
                connection.close()


@dataclass
class Answer:
    """A settle's answer, once written: the session's outbox after it, or the error."""

    written: threading.Event = field(default_factory=threading.Event)
    messages: list[str] = field(default_factory=list)
    error: Exception | None = None


class Settles:
    """One worker's deliverers' settles, written together: gathered for `every` seconds
    from the first, then written in one pipelined round trip (a round trip a node on a
    cluster), each deliverer waiting for its own answer. A pass has sent its messages when
    its settle goes, so the wait holds back no message of it, only those committed
    meanwhile, which the settle's answer brings."""

    def __init__(self, store: SessionStore, every: float = SETTLE_SECONDS) -> None:
        self.store = store
        self.every = every
        self._gathered: list[tuple[Settle, Answer]] = []
        self._lock = threading.Lock()
        self._writing = False  # a writer is gathering

    def settle(self, settle: Settle) -> list[str]:
        """Write `settle` with the others gathered meanwhile: its session's outbox after
        it (as SessionStore.outbox_settle answers)."""
        answer = Answer()
        with self._lock:
            self._gathered.append((settle, answer))
            start, self._writing = not self._writing, True
        if start:
            threading.Thread(target=self._write, daemon=True).start()
        answer.written.wait()
        if answer.error is not None:
            raise answer.error
        return answer.messages

    def _write(self) -> None:
        time.sleep(self.every)
        with self._lock:
            gathered, self._gathered, self._writing = self._gathered, [], False
        try:
            outboxes = self.store.outbox_settle([settle for settle, _ in gathered])
        except Exception as error:  # each deliverer gets it: its claim then runs out
            outboxes, failed = [[] for _ in gathered], error
        else:
            failed = None
        for (_, answer), messages in zip(gathered, outboxes):
            answer.messages, answer.error = messages, failed
            answer.written.set()


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
        if count:  # every outcome's series is there from the start, at 0 until counted
            for outcome in OUTCOMES:
                metrics.labelled(metrics.WEBHOOK_DELIVERIES, outcome)
        self.connections = Connections(CONCURRENT)
        self.settles = Settles(store)
        self._wake = threading.Event()
        # Sessions committed with messages in this worker: their claim's mark, and the
        # outbox's messages when the commit knows them.
        self._committed: dict[str, tuple[float, tuple[str, ...] | None]] = {}
        self._committed_lock = threading.Lock()
        # Sessions this worker's loop delivers right now, with the mark of a claim that came
        # meanwhile (None: none): never two deliverers of one session in one worker.
        self._active: dict[str, float | None] = {}
        self._active_lock = threading.Lock()
        self._stopping = threading.Event()
        self._slots = threading.BoundedSemaphore(CONCURRENT)
        self._loop: threading.Thread | None = None
        self._every = SCAN_SECONDS  # how often the loop claims from the schedule
        self.outage = Outage(log, "webhook deliveries")
        self.failed_at = float("-inf")  # when a scan or a delivery last met one (monotonic)
        self._scanned = float("-inf")  # when this worker last did
        # When the retries this worker's deliverers planned are due (a heap): the loop
        # claims from the schedule then, not at its next scan, so that a retry waits
        # WEBHOOK_RETRY_SECONDS (doubling), not up to a scan period more.
        self._retries: list[float] = []
        self._retries_lock = threading.Lock()

    @property
    def lease(self) -> float:
        """A claim on a session lasts this long: beyond one attempt's bound."""
        return self.timeout + 5.0

    def claim_of(self, at: float) -> float:
        """The plan a commit at `at` with messages writes with them (Change.plan): the
        session claimed by this worker for a lease, so that should the worker die right
        after the commit, another one delivers them a lease later, and that meanwhile no
        other worker's scan takes it while this one delivers it; the claim's mark."""
        return at + self.lease

    def committed(self, session_id: str, mark: float, messages: tuple[str, ...] | None) -> None:
        """The commit planned with `mark` was written: this worker's loop delivers its
        messages at once, off the request's path; `messages`: the commit's, when they are
        the whole outbox."""
        with self._committed_lock:
            self._committed[session_id] = (mark, messages)
        self._wake.set()

    def deliver_due(self) -> int:
        """Deliver the sessions committed here since, and those the schedule says are due
        (in the background when the loop runs); how many."""
        with self._committed_lock:
            claimed, self._committed = list(self._committed.items()), {}
        now = self.clock()
        if self._loop is None or now - self._scanned >= self._every or self._retry_due(now):
            self._scanned = self.clock()
            claimed += [
                (session_id, (mark, None))
                for session_id, mark in self.schedule.claim(self._scanned, self.lease)
            ]
        for session_id, (mark, messages) in claimed:
            if self._loop is None:
                self.deliver(session_id, mark, messages)
                continue
            with self._active_lock:
                if session_id in self._active:
                    # This worker delivers it already: it reads the outbox once more (what
                    # the commit wrote may be sent already).
                    self._active[session_id] = mark
                    continue
                self._active[session_id] = None
            self._slots.acquire()
            worker = threading.Thread(
                target=self._deliver_freeing, args=(session_id, mark, messages), daemon=True
            )
            worker.start()
        return len(claimed)

    def _deliver_freeing(
        self, session_id: str, mark: float, messages: tuple[str, ...] | None
    ) -> None:
        try:
            while True:
                self.deliver(session_id, mark, messages)
                with self._active_lock:
                    again = self._active.pop(session_id, None)
                    if again is None:
                        return
                    mark, messages, self._active[session_id] = again, None, None
        finally:
            self._slots.release()

    def deliver(self, session_id: str, mark: float, messages: Sequence[str] | None = None) -> None:
        """Send the session's due messages from its head (read from the outbox unless
        given), a pass at a time, then settle its claim: at the head's next attempt;
        dropped when the outbox was empty; left to run out when it was emptied here. A
        session that has just moved is likely to move again within the lease, and its
        commit plans it anew: the drop is then never paid. One that does not is claimed
        again once the lease runs out, found empty and dropped."""
        due: float | None = None
        sent = False
        try:
            if messages is None:
                messages = self.store.outbox(session_id)
            while messages:
                settle, due = self._pass(session_id, messages)
                if settle is None:
                    break
                sent = True
                # The settle answers the outbox after it: what commits added meanwhile.
                if self._loop is None:
                    (messages,) = self.store.outbox_settle([settle])
                else:
                    messages = self.settles.settle(settle)
                if due is not None:
                    break
            if due is not None or not sent:
                self.schedule.settle(session_id, mark, due)
            if due is not None and self._loop is not None:
                self._retry_at(due)
        except StoreUnavailable as error:  # its claim runs out; the outage is said once
            self._failed(error)
        except Exception:  # one bad message must not stop the loop; its claim runs out
            log.exception("webhook delivery failed", extra={"session_id": session_id})

    def _pass(self, session_id: str, messages: Sequence[str]) -> tuple[Settle | None, float | None]:
        """Send `messages` (the outbox's first ones) in order, up to the first that is not
        due or that fails: so none is sent before every one before it is done. What to
        settle (None: nothing was sent), and when the outbox is next due (None: now, or
        when its next commit says)."""
        done, last = 0, ""
        for text in messages:
            message = orjson.loads(text)
            if message["due"] > self.clock():
                due = message["due"]
                break
            if self._stopping.is_set():
                due = self.clock()
                break
            delivered = self._send(message)
            tries = message["attempts"] + 1
            if not delivered and tries < self.attempts:
                self._counted("retried")
                later = self.clock() + self.retry * 2 ** (tries - 1)
                retry = orjson.dumps({**message, "attempts": tries, "due": later}).decode()
                return Settle(session_id, done, last, text, retry), later
            self._counted("delivered" if delivered else "given_up")
            if not delivered:
                log.warning(
                    "webhook message given up",
                    extra={"session_id": session_id, "attempts": tries},
                )
            done, last = done + 1, text
        else:
            due = None
        return (Settle(session_id, done, last) if done else None), due

    def _counted(self, outcome: str) -> None:
        if self.count:
            metrics.labelled(metrics.WEBHOOK_DELIVERIES, outcome).inc()

    def _send(self, message: dict) -> bool:
        """POST the message once: whether a 2xx came within the timeout. The destination is
        checked again first (DNS may have changed) and the connection made to the address
        checked; no redirect is followed (nor a proxy: the address is checked), and at most
        MOST_BYTES of the answer are read, within the same bound."""
        where, _ = self.destinations.judge(message["url"])
        if where is None:
            return False
        parts = urlsplit(message["url"])
        host = parts.netloc.rpartition("@")[2]
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if UNSAFE.search(host) or UNSAFE.search(target):
            return False  # it could not be written as one request line and one Host field
        body = message["body"].encode()
        stamp = int(time.time())  # the attempt's own time, as receivers check it
        head = (
            f"POST {target} HTTP/1.1\r\nHost: {host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"webhook-id: {message['id']}\r\nwebhook-timestamp: {stamp}\r\n"
            f"webhook-signature: {signature(message['secret'], message['id'], stamp, body)}"
            "\r\n\r\n"
        )
        request = head.encode() + body
        until = time.monotonic() + self.timeout
        connection, kept = self.connections.take(where)
        while True:
            try:
                status, reusable = connection.exchange(request, until)
                break
            except OSError:
                connection.close()
                if not kept or connection.answered or time.monotonic() > until:
                    return False
                # A kept connection that the receiver closed meanwhile: once more, anew.
                connection, kept = self.connections.new(where), False
            except ValueError:
                connection.close()
                return False
        if reusable:
            self.connections.give(where, connection)
        else:  # an answer left unread, or the receiver's last one on this connection
            connection.close()
        return 200 <= status < 300 and time.monotonic() <= until

    def start(self, every: float = SCAN_SECONDS) -> None:
        """Deliver in the background of this process (a thread, a greenlet under gevent)."""
        if self._loop is not None:
            return
        self._every = every
        self._loop = threading.Thread(target=self._run, daemon=True)
        self._loop.name = "webhook-deliveries"
        self._loop.start()

    def _retry_at(self, due: float) -> None:
        """A retry this worker planned is due at `due`: its loop claims then."""
        with self._retries_lock:
            heapq.heappush(self._retries, due)
        self._wake.set()  # the loop's wait is shortened to it

    def _retry_due(self, now: float) -> bool:
        """Whether a retry this worker planned is due by `now` (those are then forgotten:
        the claim takes every due session)."""
        due = False
        with self._retries_lock:
            while self._retries and self._retries[0] <= now:
                heapq.heappop(self._retries)
                due = True
        return due

    def _wait(self) -> float:
        """How long the loop waits for a commit: a scan period, or less when a retry this
        worker planned is due sooner."""
        with self._retries_lock:
            if not self._retries:
                return self._every
            return min(self._every, max(0.0, self._retries[0] - self.clock()))

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(self._wait())
            self._wake.clear()
            if self._stopping.is_set():  # woken to stop: nothing more is claimed here
                return
            try:
                self.deliver_due()
            except StoreUnavailable as error:  # said once an outage, not once a scan
                self._failed(error)
            except Exception:  # the loop must outlive any one bad scan
                log.exception("webhook scan failed")
            else:
                # A scan says only that the schedule answers: a session whose delivery
                # failed is claimed again once its lease runs out, and its next attempt
                # fails within another, so until then the outage lasts (else it ended and
                # began again at every scan).
                if time.monotonic() - self.failed_at > 2 * self.lease:
                    self.outage.succeeded()

    def _failed(self, error: StoreUnavailable) -> None:
        self.failed_at = time.monotonic()
        self.outage.failed(error)

    def hand_over(self, within: float) -> None:
        """This worker exits: its loop claims nothing more, each pass in flight stops after
        the message it is sending and hands its session back to the schedule, due at once,
        and so do the sessions committed here but not yet taken up; for the workers that
        live on to deliver now, not once this worker's claim has run out. Waits at most
        `within` seconds for the passes (what one still holds then waits out its lease)."""
        self._stopping.set()
        self._wake.set()
        deadline = time.monotonic() + within
        if self._loop is not None:
            self._loop.join(within)
        for _ in range(CONCURRENT):  # every slot free: no pass left in flight
            if not self._slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
                break
        with self._committed_lock:
            committed, self._committed = list(self._committed.items()), {}
        for session_id, (mark, _) in committed:
            with contextlib.suppress(StoreUnavailable):  # else its claim runs out
                self.schedule.settle(session_id, mark, self.clock())

    def close(self) -> None:
        self._stopping.set()
        self._wake.set()
        self.schedule.close()
        self.connections.clear()
