"""Webhooks: what is sent and how (verified with the Standard Webhooks library by a real
receiver on loopback), retries, giving up, redirects, and where messages may go. Over the
in-process store, a real Redis and a real Redis Cluster; every address is on loopback (the
address rule for other ranges is judged as a unit, without traffic)."""

import base64
import itertools
import random
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import orjson
import pytest
import requests
import trustme

from service import metrics
from service.config import load_config
from service.errors import Problem
from service.hosted.deliveries import (
    Connections,
    Deliveries,
    Destinations,
    Settles,
    Where,
    public,
)
from service.hosted.sessions import open_sessions
from service.hosted.webhooks import EVENTS
from service.store import Settle
from tests.redis_server import RedisServer
from tests.service import core_matches
from tests.service.webhook_receiver import receiver

SHORT = {"preset": "levantine", "target_score": 1}
HOSTED_CONFIG = {"WEBHOOK_HOSTS": "127.0.0.1", "WEBHOOK_RETRY_SECONDS": 1.0}


@pytest.fixture(params=["memory", "redis", "cluster"])
def store_kind(request) -> str:
    return request.param


@pytest.fixture
def hook():
    with receiver() as got:
        yield got


def bearer(token: str) -> str:
    return f"Bearer {token}"


def create(sessions, url: str, seats=None, events=None, **extra) -> dict:
    seats = seats or [{"type": "human"}, {"type": "bot", "level": "greedy"}]
    webhook = {"url": url, **({"events": events} if events is not None else {})}
    body = {"game": "basra", "rules": SHORT, "seats": seats, "webhook": webhook, **extra}
    return sessions.create(body, None)


def play_to_the_end(sessions, created: dict) -> None:
    while play_first_move(sessions, created):
        pass


def play_first_move(sessions, created: dict) -> bool:
    """Seat 0 plays its first legal move; False when it has none (the match is over)."""
    token = bearer(created["seats"][0]["token"])
    answer = sessions.read(created["id"], token)
    if not answer["moves"]:
        return False
    move = {"move": answer["moves"][0], "version": answer["version"]}
    sessions.move(created["id"], token, lambda: move, None)
    return True


def drain(sessions, clock, most: int = 200) -> None:
    """Deliver until nothing is due, the clock moved on past every retry."""
    for _ in range(most):
        sessions.deliveries.deliver_due()
        clock.now += 600.0
        if sessions.deliveries.deliver_due() == 0:
            return
    raise AssertionError("deliveries did not settle")


def test_every_message_of_a_match_is_signed_in_version_order_and_says_nothing_hidden(
    sessions, clock, hook
):
    created = create(sessions, hook.url, seed="signed")
    secret = created["webhook"]["secret"]
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) >= 24
    assert created["webhook"]["url"] == hook.url and created["webhook"]["events"] == list(EVENTS)
    play_to_the_end(sessions, created)
    drain(sessions, clock)
    messages = hook.verified(secret)
    assert messages == [kept.message for kept in hook.received]
    versions = [message["data"]["version"] for message in messages]
    assert versions == sorted(versions) and versions[0] == 0
    turns = [m for m in messages if m["type"] == "session.turn"]
    assert turns and all(m["data"]["seat"] == 0 for m in turns)
    assert set(turns[0]["data"]) == {"session_id", "game", "version", "seat", "deadline"}
    (end,) = [m for m in messages if m["type"] == "session.match_end"]
    assert end == messages[-1] and end["data"]["seed"] == "signed"
    assert set(end["data"]) == {
        "session_id", "game", "version", "winners", "scores", "seed", "commitment",
    }  # fmt: skip
    assert len({kept.headers["webhook-id"] for kept in hook.received}) == len(messages)
    text = b"".join(kept.body for kept in hook.received)
    assert created["seats"][0]["token"].encode() not in text
    assert b'"hand' not in text and b'"stock' not in text
    assert all(kept.headers["content-type"] == "application/json" for kept in hook.received)


def expected_messages(record: dict, humans: set[int], absent_after: int) -> list[tuple]:
    """The messages a finished match's record says its commits caused, in order: for each
    version, a timeout for a move the server played for a seat (absent once it is the
    seat's `absent_after`-th in a row since it last moved itself), then a turn when the
    next move is a human seat's (the same seat again too); the end last."""
    moves, said, run = record["moves"], [], dict.fromkeys(humans, 0)
    by_version = {entry["version"]: entry for entry in moves}
    for version in range(moves[-1]["version"] + 1):
        entry = by_version.get(version)
        if entry is not None and entry["by"] == "timeout":
            run[entry["seat"]] += 1
            said.append(("session.timeout", version, entry["seat"],
                         run[entry["seat"]] >= absent_after))  # fmt: skip
        elif entry is not None and entry["by"] == "human":
            run[entry["seat"]] = 0
        following = by_version.get(version + 1)
        if following is not None and following["seat"] in humans:
            said.append(("session.turn", version, following["seat"]))
    return [*said, ("session.match_end", moves[-1]["version"], record["seed"],
                    record["commitment"], record["outcome"]["winners"],
                    record["outcome"]["scores"])]  # fmt: skip


def said(message: dict) -> tuple:
    data = message["data"]
    if message["type"] == "session.timeout":
        return (message["type"], data["version"], data["seat"], data["absent"])
    if message["type"] == "session.turn":
        return (message["type"], data["version"], data["seat"])
    return (message["type"], data["version"], data["seed"], data["commitment"],
            data["winners"], data["scores"])  # fmt: skip


@pytest.mark.parametrize(
    ("game", "seats"), [("bank", (None, None)), ("bank", (None, "greedy", None)),
                        ("basra", (None, None, None, None))],
)  # fmt: skip
def test_timeouts_say_if_the_seat_is_absent_and_a_seat_that_moves_again_is_told_again(
    sessions, clock, hook, game, seats
):
    """A whole match whose humans let their time run out now and then: its messages are
    exactly what its record says happened, version by version (a Bank draw leaves the same
    seat to move: its turn is told again)."""
    match = core_matches.play_out(
        sessions, game, "timed", random.Random(7), seats, clock=clock, lapse=0.4,
        turn_seconds=30, absent_after=2, webhook={"url": hook.url},
    )  # fmt: skip
    record = sessions.match_record(match["id"], bearer(match["tokens"][0]))
    drain(sessions, clock)
    messages = hook.verified(match["webhook"]["secret"])
    humans = set(match["tokens"])
    assert [said(message) for message in messages] == expected_messages(record, humans, 2)
    timeouts = [m["data"] for m in messages if m["type"] == "session.timeout"]
    assert {data["absent"] for data in timeouts} == {False, True}
    assert all(set(data) == {"session_id", "game", "version", "seat", "absent"}
               for data in timeouts)  # fmt: skip
    deadlines = [m["data"]["deadline"] for m in messages if m["type"] == "session.turn"]
    assert any(deadline is not None for deadline in deadlines)
    if game == "bank":  # a draw by a human, the same seat to move after it
        versions = {entry["version"]: entry for entry in record["moves"]}
        assert any(
            entry["move"]["type"] == "draw" and entry["seat"] in humans
            and versions.get(entry["version"] + 1, {}).get("seat") == entry["seat"]
            for entry in record["moves"]
        )  # fmt: skip


def test_a_retried_creation_announces_one_session_to_its_webhook(sessions, clock, hook):
    """A retry, and a reuse of the key with another body, create nothing: no message of a
    session nobody was answered (signed with a secret nobody has) goes out."""
    seats = [{"type": "human"}, {"type": "human"}]
    body = {"game": "basra", "rules": SHORT, "seats": seats, "webhook": {"url": hook.url}}
    first = sessions.create(body, "match-8812")
    assert sessions.create(body, "match-8812") == first
    with pytest.raises(Problem) as reused:
        sessions.create({**body, "seats": seats[::-1] + [{"type": "human"}] * 2}, "match-8812")
    assert reused.value.status == 422
    drain(sessions, clock)
    messages = hook.verified(first["webhook"]["secret"])
    assert len(messages) == len(hook.received) == 1
    assert messages[0]["data"]["session_id"] == first["id"]


def test_a_creation_still_holding_its_key_is_a_409_to_a_retry(sessions):
    """The hold a creation takes on its key before it creates, as a retry arriving
    meanwhile finds it."""
    from service.hosted.tokens import digest, fingerprint
    from service.store import HOLD

    body = {"game": "basra", "rules": SHORT, "seats": [{"type": "human"}] * 2}
    held = f"{HOLD}{fingerprint('create', body)}:another-request"
    assert sessions.store.remember_creation(digest("in-flight"), held, 30) is None
    with pytest.raises(Problem) as busy:
        sessions.create(body, "in-flight")
    assert busy.value.status == 409 and busy.value.headers["Retry-After"] == "1"
    assert busy.value.kind.name == "idempotency-key-in-use"
    with pytest.raises(Problem) as reused:
        sessions.create({**body, "seed": "other"}, "in-flight")
    assert reused.value.status == 422


def test_a_creation_unconfirmed_by_the_store_is_found_by_its_retry(sessions, monkeypatch):
    """A commit applied whose acknowledgement was lost (a 503): the retry with the same key
    gets that session, not a second one."""
    from service.store import StoreUnavailable

    real, made = sessions.commits.commit, []

    def applied_then_lost(facts, *args):
        real(facts, *args)
        made.append(facts.session_id)
        raise StoreUnavailable("no replica confirmed it in time")

    body = {"game": "basra", "rules": SHORT, "seats": [{"type": "human"}] * 2}
    monkeypatch.setattr(sessions.commits, "commit", applied_then_lost)
    with pytest.raises(StoreUnavailable):
        sessions.create(body, "unconfirmed")
    monkeypatch.undo()
    retried = sessions.create(body, "unconfirmed")
    assert made == [retried["id"]] and sessions.store.load(retried["id"]) is not None
    assert sessions.create(body, "unconfirmed") == retried


def test_the_seed_is_in_no_message_before_the_end(sessions, clock, hook):
    created = create(sessions, hook.url, seed="kept-secret-seed")
    token = bearer(created["seats"][0]["token"])
    answer = sessions.read(created["id"], token)
    sessions.move(created["id"], token, lambda: {"move": answer["moves"][0], "version": 0}, None)
    drain(sessions, clock)
    assert hook.received and all(b"kept-secret-seed" not in kept.body for kept in hook.received)


def test_only_the_chosen_events_are_sent(sessions, clock, hook):
    created = create(sessions, hook.url, events=["session.match_end"])
    play_to_the_end(sessions, created)
    drain(sessions, clock)
    assert [m["type"] for m in hook.verified(created["webhook"]["secret"])] == ["session.match_end"]


def test_a_failing_receiver_is_retried_with_backoff_then_gets_every_message_in_order(
    sessions, clock, hook
):
    hook.failing = 3
    created = create(sessions, hook.url, seed="retried")
    play_to_the_end(sessions, created)
    retried = metrics.WEBHOOK_DELIVERIES.labels("retried")._value.get()
    sessions.deliveries.deliver_due()
    assert len(hook.received) == 1  # the head failed: nothing after it was sent
    first = hook.received[0].headers["webhook-id"]
    clock.now += 0.5
    assert sessions.deliveries.deliver_due() == 0  # not due before WEBHOOK_RETRY_SECONDS
    clock.now += 0.5
    sessions.deliveries.deliver_due()
    clock.now += 1.9  # the second retry waits twice as long
    sessions.deliveries.deliver_due()
    assert len(hook.received) == 2
    drain(sessions, clock)
    assert [kept.headers["webhook-id"] for kept in hook.received[:4]] == [first] * 4
    assert metrics.WEBHOOK_DELIVERIES.labels("retried")._value.get() - retried == 3
    delivered = hook.delivered()
    versions = [message["data"]["version"] for message in delivered]
    assert versions == sorted(versions) and delivered[-1]["type"] == "session.match_end"


def test_a_message_is_given_up_after_the_last_attempt_and_the_next_one_follows(
    open_hosted, clock, hook
):
    sessions = open_hosted(WEBHOOK_ATTEMPTS=2)
    hook.failing = 2
    given_up = metrics.WEBHOOK_DELIVERIES.labels("given_up")._value.get()
    created = create(sessions, hook.url)
    token = bearer(created["seats"][0]["token"])
    answer = sessions.read(created["id"], token)
    sessions.move(created["id"], token, lambda: {"move": answer["moves"][0], "version": 0}, None)
    drain(sessions, clock)
    ids = [kept.headers["webhook-id"] for kept in hook.received]
    assert ids[0] == ids[1] and ids[2] != ids[0]
    assert metrics.WEBHOOK_DELIVERIES.labels("given_up")._value.get() - given_up == 1


def test_in_the_background_each_retry_waits_its_backoff_not_a_scan_period_more(
    hosted_config, hook
):
    """A worker's loop, on the wall clock, with its default scan period (0.5 s): the
    attempts of a message that keeps failing are WEBHOOK_RETRY_SECONDS apart, doubling."""
    settings = {"CLIENT_SEEDS": True, **hosted_config,
                "WEBHOOK_RETRY_SECONDS": 0.2, "WEBHOOK_ATTEMPTS": 4}  # fmt: skip
    sessions = open_sessions(load_config(settings, environ={}))
    sessions.deliveries.start()
    try:
        hook.failing = 10
        create(sessions, hook.url, seats=[{"type": "human"}, {"type": "human"}])
        deadline = time.monotonic() + 10.0
        while len(hook.received) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
    finally:
        sessions.close()
    arrived = [kept.arrived for kept in hook.received]
    assert len(arrived) == 4  # then given up
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrived)]
    for gap, backoff in zip(gaps, (0.2, 0.4, 0.8), strict=True):
        assert backoff - 0.01 <= gap <= backoff + 0.15, gaps


def test_messages_share_a_kept_connection_and_one_the_receiver_closed_is_made_anew(
    sessions, clock, hook
):
    retried = metrics.WEBHOOK_DELIVERIES.labels("retried")._value.get()
    created = create(sessions, hook.url)
    for _ in range(2):
        assert play_first_move(sessions, created)
        sessions.deliveries.deliver_due()
    assert len(hook.received) == 3 and hook.connections == 1  # creation's turn and two more
    hook.drop_connections()
    assert play_first_move(sessions, created)
    sessions.deliveries.deliver_due()
    assert [kept.headers["answered"] for kept in hook.received] == ["ok"] * 4
    assert hook.connections == 2
    assert metrics.WEBHOOK_DELIVERIES.labels("retried")._value.get() == retried


def test_an_emptied_outbox_keeps_its_claim_until_the_lease_then_a_scan_drops_it(
    sessions, clock, hook
):
    deliveries = sessions.deliveries
    created = create(sessions, hook.url)
    assert deliveries.deliver_due() == 1 and len(hook.received) == 1
    clock.now += deliveries.lease - 1
    assert deliveries.deliver_due() == 0  # the delivering claim holds: no scan takes it
    clock.now += 2
    assert deliveries.deliver_due() == 1  # its lease ran out: claimed, found empty, dropped
    assert deliveries.deliver_due() == 0
    assert deliveries.schedule.claim(clock.now + 10 * deliveries.lease, 1.0) == []
    assert len(hook.received) == 1 and created["id"] in hook.received[0].body.decode()


def test_a_worker_that_exits_hands_what_was_committed_on_it_to_the_others_at_once(
    sessions, clock, hook
):
    """A commit plans its session claimed by its own worker for a lease: a worker that exits
    (a deploy) before its loop took the session up hands it back, due at once, for another
    worker's next scan, not once the lease has run out."""
    deliveries = sessions.deliveries
    created = create(sessions, hook.url)
    assert deliveries.schedule.claim(clock.now, 1.0) == []  # the committing worker's claim
    deliveries.hand_over(1.0)
    assert [claimed for claimed, _ in deliveries.schedule.claim(clock.now, 1.0)] == [created["id"]]
    assert hook.received == []


def test_a_redirect_is_not_followed(sessions, clock, hook):
    hook.failing, hook.failure = 1, 302
    create(sessions, hook.url)
    sessions.deliveries.deliver_due()
    assert [kept.headers["answered"] for kept in hook.received] == ["failed"]
    clock.now += 1.0
    sessions.deliveries.deliver_due()
    assert [kept.headers["answered"] for kept in hook.received] == ["failed", "ok"]


def test_an_empty_list_of_events_reads_as_left_out(sessions, hook):
    """OpenAPI Generator's java clients write a list left unset as []: a webhook that
    sends nothing would be no webhook."""
    assert create(sessions, hook.url, events=[])["webhook"]["events"] == list(EVENTS)


def test_later_reads_show_the_webhook_without_its_secret(open_hosted, hook):
    """The owner's, a seat's and a spectator's: without API_KEYS a session has no owner,
    and later answers show the webhook all the same. The owner reads what a spectator
    reads, with the seats and the owner only."""
    from service.hosted.tokens import digest
    from service.keys import new_key

    key = new_key()
    sessions = open_hosted(API_KEYS=f"acme:{digest(key)}")
    body = {"game": "basra", "seats": [{"type": "human"}, {"type": "human"}], "spectators": 1,
            "webhook": {"url": hook.url, "events": ["session.match_end"]}}  # fmt: skip
    created = sessions.create(body, None, bearer(key))
    shown = {"url": hook.url, "events": ["session.match_end"]}
    owned = sessions.read(created["id"], bearer(key))
    spectator = sessions.read(created["id"], bearer(created["spectators"][0]["token"]))
    assert owned["webhook"] == spectator["webhook"] == shown
    assert {k: v for k, v in owned.items() if k not in ("seats", "owner")} == spectator
    seat = sessions.read(created["id"], bearer(created["seats"][0]["token"]))
    assert seat["webhook"] == shown
    unowned = open_hosted()  # creation open (no API_KEYS): its sessions have no owner
    made = unowned.create(body, None)
    assert unowned.read(made["id"], bearer(made["seats"][1]["token"]))["webhook"] == shown


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:9/hooks", "http://127.0.0.2/hooks", "http://localhost/hooks",
     "http://[::1]/hooks", "https://127.0.0.1/hooks", "ftp://example.com/x", "hooks"],
)  # fmt: skip
def test_without_an_allow_list_a_non_public_url_is_a_422_naming_webhook_url(open_hosted, url):
    sessions = open_hosted(WEBHOOK_HOSTS=None)
    with pytest.raises(Problem) as error:
        create(sessions, url)
    assert error.value.status == 422 and "webhook.url" in error.value.errors


def test_a_host_is_judged_again_at_every_attempt(open_hosted, clock, hook, monkeypatch):
    """A name public at creation that resolves to loopback later (DNS rebinding) is not
    sent to: the attempt fails, and is retried, while the receiver there hears nothing."""
    port = int(hook.url.split(":")[2].split("/")[0])
    resolves = {"hooks.example": "8.8.8.8"}  # a public address at creation
    lookup = socket.getaddrinfo

    def getaddrinfo(host, *args, **options):
        if host in resolves:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (resolves[host], port))]
        return lookup(host, *args, **options)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    sessions = open_hosted(WEBHOOK_HOSTS=None)
    create(sessions, f"http://hooks.example:{port}/hooks")
    resolves["hooks.example"] = "127.0.0.1"  # where the receiver listens
    retried = metrics.WEBHOOK_DELIVERIES.labels("retried")._value.get()
    assert sessions.deliveries.deliver_due() == 1
    assert metrics.WEBHOOK_DELIVERIES.labels("retried")._value.get() == retried + 1
    assert hook.received == []


def test_the_allow_list_replaces_the_rule():
    allowed = Destinations("127.0.0.1, [::1]")
    assert allowed.judge("http://127.0.0.1:8080/x") == (
        ("http", "127.0.0.1", 8080, "127.0.0.1"), None,
    )  # fmt: skip
    assert allowed.judge("http://[::1]:8080/x") == (("http", "::1", 8080, "::1"), None)
    assert allowed.judge("http://127.0.0.2/x")[1] is not None
    assert allowed.judge("http://localhost/x")[1] is not None


def test_a_public_destination_is_sent_to_the_address_its_check_resolved():
    # An address literal resolves without a lookup: nothing leaves the machine. A delivery
    # connects to the address judged, so a name cannot resolve elsewhere after its check.
    assert Destinations().judge("https://8.8.8.8:8443/hooks") == (
        ("https", "8.8.8.8", 8443, "8.8.8.8"), None,
    )  # fmt: skip
    assert Destinations().judge("http://[2001:4860:4860::8888]/x") == (
        ("http", "2001:4860:4860::8888", 80, "2001:4860:4860::8888"), None,
    )  # fmt: skip
    assert Destinations().judge("http://127.0.0.1/x")[0] is None


@pytest.mark.parametrize(
    ("address", "ok"),
    [("127.0.0.1", False), ("127.8.9.10", False), ("10.1.2.3", False), ("172.16.0.1", False),
     ("192.168.0.1", False), ("169.254.169.254", False), ("100.64.0.1", False),
     ("0.0.0.0", False), ("224.0.0.251", False), ("239.1.2.3", False), ("224.0.1.1", False),
     ("255.255.255.255", False), ("::1", False), ("::", False), ("fe80::1", False),
     ("fc00::1", False), ("ff02::1", False), ("::ffff:127.0.0.1", False),
     ("::ffff:10.0.0.1", False), ("fe80::1%eth0", False),
     ("8.8.8.8", True), ("1.1.1.1", True), ("2001:4860:4860::8888", True),
     ("::ffff:8.8.8.8", True),
     # IPv6 forms that carry an IPv4 address are judged by it: IPv4-compatible, SIIT, 6to4,
     # NAT64 (a NAT64 gateway reaches 10.0.0.1 for 64:ff9b::a00:1); the local-use NAT64
     # prefix and site-local (IPv6's former private range) are never public.
     ("::7f00:1", False), ("::a00:1", False), ("2002:7f00:1::1", False),
     ("2002:a9fe:a9fe::1", False), ("64:ff9b::7f00:1", False), ("64:ff9b::a00:1", False),
     ("64:ff9b:1::808:808", False), ("fec0::1", False), ("::ffff:0:7f00:1", False),
     ("2002:808:808::1", True), ("64:ff9b::808:808", True)],
)  # fmt: skip
def test_the_address_rule(address, ok):
    assert public(address) is ok


def test_over_http_a_refused_url_is_a_422_problem(base):
    body = {"game": "basra", "seats": [{"type": "human"}, {"type": "human"}],
            "webhook": {"url": "http://127.0.0.2/hooks"}}  # fmt: skip
    refused = requests.post(f"{base}/v1/sessions", json=body, timeout=30)
    assert refused.status_code == 422
    assert "webhook.url" in refused.json()["errors"]
    bad_event = {**body, "webhook": {"url": "http://127.0.0.1/x", "events": ["session.nope"]}}
    refused = requests.post(f"{base}/v1/sessions", json=bad_event, timeout=30)
    assert refused.status_code == 422 and "webhook.events.0" in refused.json()["errors"]


@pytest.fixture
def tls_receiver():
    """An HTTPS receiver on 127.0.0.1 whose certificate names `hooks.example` only, and a
    client context that trusts its throwaway authority."""
    authority = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("hooks.example").configure_cert(server_context)
    client_context = ssl.create_default_context()
    authority.configure_trust(client_context)
    with receiver() as got:
        yield got, server_context, client_context


def test_https_goes_to_the_address_checked_with_the_certificate_of_the_urls_host(tls_receiver):
    got, server_context, client_context = tls_receiver
    port = int(got.url.split(":")[2].split("/")[0])
    got.wrap(server_context)
    connections = Connections(2, client_context)
    # Connected to the address a destination's check resolved, the certificate checked
    # against the URL's host: no lookup of hooks.example is ever made.
    trusted = connections.new(("https", "127.0.0.1", port, "hooks.example"))
    assert trusted.exchange(post("hooks.example"), time.monotonic() + 5) == (204, True)
    trusted.close()
    elsewhere = connections.new(("https", "127.0.0.1", port, "other.example"))
    with pytest.raises(ssl.SSLCertVerificationError):
        elsewhere.exchange(post("other.example"), time.monotonic() + 5)
    elsewhere.close()
    assert [kept.headers["host"] for kept in got.received] == ["hooks.example"]


def post(host: str) -> bytes:
    return f"POST /hooks HTTP/1.1\r\nHost: {host}\r\nContent-Length: 2\r\n\r\n{{}}".encode()


def test_racing_deliverers_send_no_message_before_the_ones_before_it_are_delivered(
    sessions, clock, hook
):
    # Two workers' deliverers hold the same session at once (one's lease ran out mid-send),
    # the receiver failing now and then: every message still arrives, and none is sent
    # before every one before it got a 2xx from one of them.
    created = create(sessions, hook.url)
    play_to_the_end(sessions, created)
    store = sessions.store
    order = [orjson.loads(text)["id"] for text in store.outbox(created["id"])]
    assert len(order) > 5
    first = sessions.deliveries
    second = Deliveries(
        store, store.outbox_schedule, Destinations("127.0.0.1"), retry=1.0, attempts=10,
        timeout=5.0, clock=clock,
    )  # fmt: skip
    hook.fail_every = 7
    for _ in range(60):
        racing = [
            threading.Thread(target=deliverer.deliver, args=(created["id"], clock.now + 1.0))
            for deliverer in (first, second)
        ]
        for thread in racing:
            thread.start()
        for thread in racing:
            thread.join()
        if not store.outbox(created["id"]):
            break
        clock.now += 600.0
    second.close()
    delivered: set[str] = set()
    for kept in hook.received:
        sent = kept.headers["webhook-id"]
        assert set(order[: order.index(sent)]) <= delivered, "sent before one before it"
        if kept.headers["answered"] == "ok":
            delivered.add(sent)
    assert delivered == set(order)


def test_settles_gathered_meanwhile_are_written_in_one_call_each_answered_its_own(
    sessions, hook, monkeypatch
):
    store = sessions.store
    ids = [create(sessions, hook.url)["id"] for _ in range(6)]
    outboxes = {session_id: store.outbox(session_id) for session_id in ids}
    written: list[int] = []
    write = store.outbox_settle
    monkeypatch.setattr(store, "outbox_settle", lambda all: written.append(len(all)) or write(all))
    settles = Settles(store, every=0.2)
    answers: dict[str, list[str]] = {}

    def settle(session_id: str) -> None:
        answers[session_id] = settles.settle(Settle(session_id, 1, outboxes[session_id][0]))

    deliverers = [threading.Thread(target=settle, args=(session_id,)) for session_id in ids]
    for thread in deliverers:
        thread.start()
    for thread in deliverers:
        thread.join()
    assert written == [6]
    assert answers == {session_id: outboxes[session_id][1:] for session_id in ids}


@contextmanager
def answering(answer: bytes | None, close: bool = False) -> Iterator[Where]:
    """A receiver on loopback that reads one request and writes `answer` as it is (None:
    nothing), then closes the connection when told to; where it listens."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(65536)
            if answer is not None:
                connection.sendall(answer)
            if close or answer is None:
                connection.shutdown(socket.SHUT_WR)
            time.sleep(2.0)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield ("http", "127.0.0.1", listener.getsockname()[1], "127.0.0.1")
    finally:
        listener.close()


@pytest.mark.parametrize(
    ("answer", "close", "expected"),
    [(b"HTTP/1.1 204 No Content\r\n\r\n", False, (204, True)),
     (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", False, (200, True)),
     (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n0\r\n"
      b"X-Trailer: 1\r\n\r\n", False, (200, True)),
     (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
      False, (202, True)),
     (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", False, (200, False)),
     (b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", False, (200, False)),
     (b"HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n", False,
      (302, True)),
     (b"HTTP/1.1 200 OK\r\n\r\nuntil the receiver closes", True, (200, False)),
     # At most MOST_BYTES of an answer are read: the rest is left, and the connection.
     (b"HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n" + b"x" * 200000, False,
      (200, False))],
)  # fmt: skip
def test_an_answer_is_read_as_http_frames_it_and_says_if_the_connection_goes_on(
    answer, close, expected
):
    with answering(answer, close) as where:
        connection = Connections(1).new(where)
        assert connection.exchange(post("127.0.0.1"), time.monotonic() + 5) == expected
        connection.close()


@pytest.mark.parametrize(
    ("answer", "error"),
    [(b"SSH-2.0-OpenSSH_9.6\r\n\r\n", ValueError),  # not HTTP
     (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", ConnectionError),  # cut short
     (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n", TimeoutError),  # a head never ended
     (None, ConnectionError)],  # closed without an answer
)  # fmt: skip
def test_an_answer_that_is_not_whole_http_within_the_bound_fails(answer, error):
    with answering(answer, close=answer is not None and b"short" in answer) as where:
        connection = Connections(1).new(where)
        started = time.monotonic()
        with pytest.raises(error):
            connection.exchange(post("127.0.0.1"), time.monotonic() + 0.5)
        assert time.monotonic() - started < 1.5
        connection.close()


def test_a_redis_restarted_mid_match_loses_no_message_and_keeps_their_order(tmp_path, clock, hook):
    # Restarted from its append-only file: its scripts are gone and every pooled connection
    # is dead; the deliverers load the scripts again and deliver every message in order.
    with RedisServer(tmp_path, appendonly="yes") as server:
        config = load_config(
            {**HOSTED_CONFIG, "REDIS_URL": server.url, "CLIENT_SEEDS": True}, environ={}
        )
        sessions = open_sessions(config, clock)
        try:
            created = create(sessions, hook.url)
            for _ in range(3):
                assert play_first_move(sessions, created)
                sessions.deliveries.deliver_due()
                server.stop()
                server.start()
            play_to_the_end(sessions, created)
            drain(sessions, clock)
        finally:
            sessions.close()
    delivered = hook.delivered()
    versions = [message["data"]["version"] for message in delivered]
    assert versions[0] == 0 and versions == sorted(versions)
    assert delivered[-1]["type"] == "session.match_end"
    assert len(delivered) == len({kept.headers["webhook-id"] for kept in hook.received})


def test_every_delivery_outcome_is_counted_from_zero_before_the_first_message():
    """In a fresh process (the counters are the process's): each outcome's series is in the
    exposition from the start, so that a reader tells "none given up" from "not counted"."""
    script = (
        "from service import create_app, metrics\n"
        "create_app({'METRICS': True})\n"
        "print(metrics.exposition().decode())\n"
    )
    exposed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    for outcome in ("delivered", "retried", "given_up"):
        assert f'cards_webhook_deliveries_total{{outcome="{outcome}"}} 0.0' in exposed
