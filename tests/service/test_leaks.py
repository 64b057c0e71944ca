"""One hunt for leaks, end to end: whole matches of both games through real gunicorn (two
workers, the shipped gunicorn.conf.py, the most verbose log level) over a real Redis, with
integrator keys, a webhook receiver, spectators, the owner reading, event streams and long
polls, a turn timeout, bots, every kind of error, a Redis pause, records, replays and
deletion. Every byte the service emits is kept per party (each answer with its headers, each
stream, each webhook request, the log, /metrics, the Redis keyspace mid-match and at the
end) and searched for every token, key and webhook secret of the run, every seed before its
match ended, and, per party and version, every card that party could not see then."""

import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis
import requests

from engine.game import get_game
from service.keys import new_key
from tests.gunicorn_server import gunicorn
from tests.redis_server import RedisServer
from tests.service.live_client import Replica, Stream
from tests.service.webhook_receiver import Receiver, receiver

# A card in any form text gives it: `TD`, `10D`. Ids, tokens and keys hold no suit letter
# and request ids and digests are lower-case hex, so whatever this finds is a card.
CARD = re.compile(r"(?<![0-9A-Za-z])(10|[2-9TJQKA])([CDHS])(?![0-9A-Za-z])")
OWNER_KEY, STRANGER_KEY, METRICS_TOKEN = new_key(), new_key(), new_key()
STATELESS_SEED = "a seed sent to the stateless API"
AFTER_THE_END = 10**9  # the version of what is read once a match is over (records, replays)
PROVOKED = (1, 4)  # the matches (one of each game) that meet every kind of error
# (game, rules, seats: "human" or a bot's level, dealt from a seed its client chose): short
# matches that still run round after round (deal after deal) to their end. Match 0's turns
# time out after a second: its first one does.
LEVANTINE = {"preset": "levantine", "target_score": 1}
EGYPTIAN = {"preset": "egyptian", "target_score": 1}
CLASSIC = {"preset": "classic", "target_score": 1}
MATCHES = [
    ("basra", LEVANTINE, ["human", "human"], False),
    ("basra", EGYPTIAN, ["human", "greedy", "random", "greedy"], True),
    ("basra", LEVANTINE, ["human", "random", "human", "random"], False),
    ("basra", EGYPTIAN, ["human", "greedy"], True),
    ("bank", CLASSIC, ["human", "human"], False),
    ("bank", CLASSIC, ["human", "random", "greedy"], True),
    ("bank", CLASSIC, ["human", "random", "human", "greedy"], False),
]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def cards_in(text: str) -> set[str]:
    return {("T" if rank == "10" else rank) + suit for rank, suit in CARD.findall(text)}


@dataclass
class Seen:
    """One answer as its party got it, at the session's `version` then."""

    party: str  # "seat<n>", "spectator", "owner", "stranger" (another integrator), "anonymous"
    match: int | None
    version: int
    headers: str
    body: str
    sent: set[str]  # the cards its request named itself
    may_hold: frozenset[str] = frozenset()  # the secrets this answer is the one to give

    @property
    def text(self) -> str:
        return self.headers + self.body


@dataclass
class Match:
    id: str
    game: str
    seats: int
    tokens: dict[int, str]
    spectator: str
    secret: str  # the webhook's
    streams: dict[str, Stream]  # by party, each followed from version 0 to the end
    seed: str | None = None  # read from the record once the match is over
    ended_at: int = 0  # where in Hunt.seen its answers may show the seed
    replica: Replica | None = None
    laid: dict[int, set[str]] = field(default_factory=dict)  # the cards each version's move laid


@dataclass
class Hunt:
    base: str
    seen: list[Seen] = field(default_factory=list)
    matches: list[Match] = field(default_factory=list)
    redis_dumps: list[str] = field(default_factory=list)
    log: str = ""
    metrics: str = ""
    webhooks: list[tuple[str, str]] = field(default_factory=list)  # (headers, body)

    def call(
        self, party: str, secret: str | None, method: str, path: str, match: int | None = None,
        version: int = 0, **options: Any,
    ) -> requests.Response:  # fmt: skip
        """One request as `party` with its bearer `secret`; its answer is kept. Connection:
        close, so that no connection waits for a next request when gunicorn stops (it waits
        for those up to its keep-alive, 5 s)."""
        bearer = {"Authorization": f"Bearer {secret}"} if secret else {}
        options["headers"] = {**bearer, "Connection": "close", **options.get("headers", {})}
        answer = requests.request(method, self.base + path, timeout=30, **options)
        sent = options.get("json")
        move = sent.get("move") if isinstance(sent, dict) else None
        said = answer.json() if answer.headers.get("Content-Type", "").endswith("json") else None
        if isinstance(said, dict) and isinstance(said.get("version"), int):
            version = said["version"]  # the version the answer shows
        self.seen.append(Seen(party, match, version, json.dumps(dict(answer.headers)), answer.text,
                              cards_in(json.dumps(move))))  # fmt: skip
        return answer


def create(hunt: Hunt, index: int, hook: Receiver) -> Match:
    """Match `index` created by the owner, every reader's stream open on it."""
    game, rules, kinds, client_seed = MATCHES[index]
    seats = [{"type": "human"} if kind == "human" else {"type": "bot", "level": kind}
             for kind in kinds]  # fmt: skip
    body = {"game": game, "rules": rules, "seats": seats, "spectators": 1,
            "webhook": {"url": hook.url},
            **({"seed": f"client seed {new_key()}"} if client_seed else {}),
            **({"turn_seconds": 1, "timeout_level": "random"} if index == 0 else {})}  # fmt: skip
    answer = hunt.call("owner", OWNER_KEY, "POST", "/v1/sessions", json=body,
                       headers={"Idempotency-Key": f"create-{index}"})  # fmt: skip
    assert answer.status_code == 201, answer.text
    created = answer.json()
    tokens = {entry["seat"]: entry["token"] for entry in created["seats"] if "token" in entry}
    spectator, secret = created["spectators"][0]["token"], created["webhook"]["secret"]
    hunt.seen[-1].may_hold = frozenset([*tokens.values(), spectator, secret, bare(secret)])
    url = f"{hunt.base}/v1/sessions/{created['id']}"
    readers = {f"seat{seat}": token for seat, token in tokens.items()}
    readers |= {"spectator": spectator, "owner": OWNER_KEY}  # (Connection: close, as `call`)
    streams = {party: Stream(url, token, {"Connection": "close"}, {"after": 0}).__enter__()
               for party, token in readers.items()}  # fmt: skip
    return Match(created["id"], game, len(kinds), tokens, spectator, secret, streams)


def bare(secret: str) -> str:
    """A webhook secret's base64 part."""
    return secret.removeprefix("whsec_")


def provoke(hunt: Hunt, index: int, match: Match, seat: int, read: dict, rs: RedisServer) -> None:
    """Every kind of error, at `seat`'s turn (`read`: its answer): none may tell what another
    seat holds. Every card the seat does not hold, played, is refused in the same words."""
    path, version, token = f"/v1/sessions/{match.id}", read["version"], match.tokens[seat]
    legal = {"move": read["moves"][0], "version": version}

    def post(party: str, secret: str, body: Any, **options: Any) -> requests.Response:
        sent = {"data": body} if isinstance(body, bytes) else {"json": body}
        return hunt.call(party, secret, "POST", f"{path}/moves", index, version, **sent, **options)

    me = f"seat{seat}"
    refusals = set()
    ranks = "6789TJQKA" if match.game == "bank" else "A23456789TJQK"
    for card in {rank + suit for rank in ranks for suit in "CDHS"} - set(read["view"]["hand"]):
        shaped = {"type": "lay", "card": card} if match.game == "bank" else {"card": card}
        refused = post(me, token, {"move": shaped, "version": version})
        assert refused.status_code == 422, refused.text
        refusals.add(refused.text.replace(card, "<card>"))
    assert len(refusals) == 1, refusals
    other = next((other for other in match.tokens if other != seat), None)
    if other is not None:
        assert post(f"seat{other}", match.tokens[other], legal).status_code == 403
    assert post(me, token, {**legal, "version": version + 1}).status_code == 409
    json_type = {"Content-Type": "application/json"}
    assert post(me, token, b"{not json", headers=json_type).status_code == 400
    assert post(me, token, {"move": "x" * 70_000, "version": version}).status_code == 413
    assert post(me, token, {"move": {"card": "2C"}, "version": version},
                headers={"Idempotency-Key": "k" * 300}).status_code == 422  # fmt: skip
    assert post("spectator", match.spectator, legal).status_code == 403
    assert post("owner", OWNER_KEY, legal).status_code == 403
    assert post("anonymous", token[::-1], legal).status_code == 401
    assert hunt.call(me, token, "GET", path, index, version,
                     headers={"If-None-Match": read["etag"]}).status_code == 304  # fmt: skip
    bad_after = hunt.call(me, token, "GET", f"{path}/events", index, version, params={"after": "x"})
    assert bad_after.status_code == 422
    as_key = hunt.call(me, token, "POST", "/v1/sessions", index, version, json={"game": "basra"})
    assert as_key.status_code == 401  # a seat token is never a key
    assert hunt.call(me, token, "GET", f"/v1/sessions/{token}", index).status_code == 404  # a slip
    theirs = hunt.call("stranger", STRANGER_KEY, "GET", path, index, version)
    nobodys = hunt.call("stranger", STRANGER_KEY, "GET", f"/v1/sessions/{'0' * 26}")
    assert theirs.status_code == nobodys.status_code == 404
    assert theirs.text.replace(match.id, "0" * 26) == nobodys.text  # nothing tells them apart
    added = hunt.call(me, token, "POST", f"{path}/spectators", index, version)
    hunt.seen[-1].may_hold = frozenset([added.json()["token"]])
    if index == PROVOKED[0]:
        rs.pause()  # a Redis that does not answer: a 503, then on as before
        try:
            assert hunt.call(me, token, "GET", path, index, version).status_code == 503
        finally:
            rs.resume()
    hunt.redis_dumps.append(dump(rs))


def play(hunt: Hunt, index: int, match: Match, rs: RedisServer) -> None:
    """The match to its end: each human seat reads it, the one to move moves (and retries
    with its Idempotency-Key), the spectator and the owner read it and long poll."""
    path, turn = f"/v1/sessions/{match.id}", 0
    while True:
        start = len(hunt.seen)
        reads = {seat: hunt.call(f"seat{seat}", token, "GET", path, index)
                 for seat, token in match.tokens.items()}  # fmt: skip
        read = {seat: {**answer.json(), "etag": answer.headers["ETag"]}
                for seat, answer in reads.items()}  # fmt: skip
        version = max(answer["version"] for answer in read.values())
        hunt.call("spectator", match.spectator, "GET", path, index, version)
        hunt.call("owner", OWNER_KEY, "GET", path, index, version)
        if read[0]["view"]["status"] == "match_over":
            match.ended_at = start
            return
        movers = [seat for seat, answer in read.items()
                  if answer["moves"] and answer["version"] == version]  # fmt: skip
        if movers and turn == 0 and index in PROVOKED:
            provoke(hunt, index, match, movers[0], read[movers[0]], rs)
        if movers and not (index == 0 and version == 0):  # match 0's first turn times out
            (seat,) = movers
            moves = read[seat]["moves"]
            chosen = {key: value for key, value in moves[turn % len(moves)].items()
                      if key in ("card", "capture", "type", "cards")}  # fmt: skip
            for _ in range(2):  # the retry gets the first answer again
                moved = hunt.call(f"seat{seat}", match.tokens[seat], "POST", f"{path}/moves",
                                  index, json={"move": chosen, "version": version},
                                  headers={"Idempotency-Key": f"{match.id}-{version}"})  # fmt: skip
                if moved.status_code == 409 and index == 0:
                    break  # the turn timer came first
                assert moved.status_code == 200, moved.text
            turn += 1
        hunt.call("spectator", match.spectator, "GET", f"{path}/events", index, version,
                  params={"after": version})  # fmt: skip


def finish(hunt: Hunt, index: int, match: Match) -> None:
    """Records for all, a replay, the owner's list; the session ended; the match replayed
    here from its record, to know who could see which card at every version."""
    path = f"/v1/sessions/{match.id}"
    record = hunt.call("owner", OWNER_KEY, "GET", f"{path}/record", index, AFTER_THE_END).json()
    for seat, token in match.tokens.items():
        hunt.call(f"seat{seat}", token, "GET", f"{path}/record", index, AFTER_THE_END)
    replayed = hunt.call("anonymous", None, "POST", f"/v1/games/{match.game}/replay", index,
                         AFTER_THE_END, json={"record": record})  # fmt: skip
    assert replayed.status_code == 200
    hunt.call("owner", OWNER_KEY, "GET", "/v1/sessions", index, AFTER_THE_END)
    assert hunt.call("stranger", STRANGER_KEY, "GET", "/v1/sessions").json()["sessions"] == []
    ended = hunt.call("seat0", match.tokens[0], "DELETE", path, index, AFTER_THE_END)
    assert ended.status_code == 204
    for stream in match.streams.values():
        assert stream.wait_for(lambda s: s.closed)
        stream.stop()
    match.seed = record["seed"]
    match.replica = Replica(get_game(match.game), record["rules"], match.seats, record["seed"])
    for entry in record["moves"]:
        match.replica.play(entry["move"])
        match.laid[entry["version"]] = cards_in(json.dumps(entry["move"]))


def dump(rs: RedisServer) -> str:
    """Every key and value in Redis, as text."""
    client = redis.Redis.from_url(rs.url)
    read = {"string": client.get, "hash": client.hgetall, "set": client.smembers,
            "list": lambda key: client.lrange(key, 0, -1),
            "zset": lambda key: client.zrange(key, 0, -1)}  # fmt: skip
    return repr({key: read[client.type(key).decode()](key) for key in client.scan_iter()})


def match_ends(hook: Receiver) -> int:
    return sum(b'"session.match_end"' in got.body for got in list(hook.received))


@pytest.fixture(scope="module")
def hunt(tmp_path_factory) -> Hunt:
    directory = tmp_path_factory.mktemp("leaks")
    with RedisServer(directory / "redis") as rs, receiver() as hook, gunicorn(
        directory / "gunicorn.log", REDIS_URL=rs.url, WEB_CONCURRENCY="2", LOG_LEVEL="debug",
        API_KEYS=f"owner:{digest(OWNER_KEY)},stranger:{digest(STRANGER_KEY)}",
        WEBHOOK_HOSTS="127.0.0.1", METRICS_TOKEN=METRICS_TOKEN, LONG_POLL_SECONDS="2",
        TIMER_SCAN_SECONDS="0.2", REDIS_TIMEOUT_SECONDS="0.3",
        PROMETHEUS_MULTIPROC_DIR=str(directory / "metrics"),
    ) as server:  # fmt: skip
        hunted = Hunt(server.url)
        for index in range(len(MATCHES)):
            hunted.matches.append(create(hunted, index, hook))
            play(hunted, index, hunted.matches[-1], rs)
            finish(hunted, index, hunted.matches[-1])
        new = hunted.call("anonymous", None, "POST", "/v1/games/bank/new",
                          json={"seed": STATELESS_SEED, "seats": 3})  # fmt: skip
        hint = {"state": new.json()["state"], "level": "random"}
        assert hunted.call("anonymous", None, "POST", "/v1/games/bank/hint", json=hint).ok
        hunted.metrics = hunted.call("anonymous", METRICS_TOKEN, "GET", "/metrics").text
        deadline = time.monotonic() + 30  # a bound, should the messages never come
        while match_ends(hook) < len(MATCHES) and time.monotonic() < deadline:
            time.sleep(0.05)
        hunted.webhooks = [(json.dumps(got.headers), got.body.decode()) for got in hook.received]
        hunted.redis_dumps.append(dump(rs))
    hunted.log = (directory / "gunicorn.log").read_text()
    return hunted


def secrets_of(hunt: Hunt) -> dict[str, tuple[str, str]]:
    """Every secret of the run and the forms it could leak in (itself, its first or last 16
    characters, its SHA-256), each with the secret it gives away and what that is."""
    named = {OWNER_KEY: "a key", STRANGER_KEY: "a key", METRICS_TOKEN: "the metrics token"}
    for match in hunt.matches:
        named |= dict.fromkeys([*match.tokens.values(), match.spectator], "a token")
        named |= dict.fromkeys([match.secret, bare(match.secret)], "a webhook secret")
    for seen in hunt.seen:  # the spectator tokens added later
        named |= {secret: "a token" for secret in seen.may_hold if secret not in named}
    found = {}
    for secret, what in named.items():
        found |= dict.fromkeys([secret[:16], secret[-16:]], (secret, f"{what} (a part)"))
        found |= {secret: (secret, what), digest(secret): (secret, f"{what}'s digest")}
    return found


def seat_of(party: str) -> int | None:
    return int(party.removeprefix("seat")) if party.startswith("seat") else None


def test_no_answer_holds_a_secret_it_was_not_made_for(hunt):
    secrets = secrets_of(hunt)
    for seen in hunt.seen:
        seat = seat_of(seen.party)
        own = {hunt.matches[seen.match].tokens[seat]} if seat is not None else set()
        for form, (secret, what) in secrets.items():
            if secret not in seen.may_hold | own:
                assert form not in seen.text, (what, seen.party, seen.body[:300])
    for match in hunt.matches:
        for stream in match.streams.values():
            assert not [what for form, (_, what) in secrets.items() if form in stream.raw.decode()]


def test_no_seed_before_its_match_ended(hunt):
    for index, match in enumerate(hunt.matches):
        assert match.seed is not None
        for seen in hunt.seen[: match.ended_at]:
            assert seen.match != index or match.seed not in seen.text, (seen.party, seen.body)
        assert all(match.seed not in stream.raw.decode() for stream in match.streams.values())
        assert any(match.seed in seen.text for seen in hunt.seen[match.ended_at :])


def hidden(match: Match, version: int, seat: int | None) -> set[str]:
    """The cards `seat` (None: a spectator, the owner) could not see at `version`."""
    assert match.replica is not None
    states = match.replica.states
    state = get_game(match.game).write(states[min(version, len(states) - 1)])
    others = [hand for holder, hand in enumerate(state["hands"]) if holder != seat]
    return {*state["stock"], *(card for hand in others for card in hand)}


def event_leaks(match: Match, events: list[dict[str, Any]], seat: int | None) -> set[str]:
    """The cards events name that `seat` could see neither before nor after their version,
    and that its move did not lay (a card played may be dealt again by the same version)."""
    return {card for event in events for card in
            (cards_in(json.dumps(event)) - match.laid[event["version"]])
            & hidden(match, event["version"], seat)
            & hidden(match, event["version"] - 1, seat)}  # fmt: skip


def test_no_party_is_shown_a_card_it_could_not_see(hunt):
    for seen in hunt.seen:
        if seen.match is None or seen.version == AFTER_THE_END:
            continue
        match, seat = hunt.matches[seen.match], seat_of(seen.party)
        answer = json.loads(seen.body) if seen.body.startswith(("[", "{")) else seen.body
        events = answer if isinstance(answer, list) else []
        if isinstance(answer, dict):
            events = answer.pop("events", [])
        assert not event_leaks(match, events, seat), (seen.party, events)
        named = set() if isinstance(answer, list) else cards_in(json.dumps(answer)) - seen.sent
        assert not named & hidden(match, seen.version, seat), (seen.party, seen.body[:300])
    for match in hunt.matches:
        for party, stream in match.streams.items():
            assert stream.versions() and stream.messages[-1].event == "end"
            assert not event_leaks(match, stream.events(), seat_of(party)), party


def test_logs_metrics_webhooks_and_redis_hold_no_secret_seed_or_card(hunt):
    secrets = secrets_of(hunt)
    seeds = [*(match.seed for match in hunt.matches), STATELESS_SEED]
    assert "[DEBUG]" in hunt.log and '"level":"INFO"' in hunt.log  # the most verbose level
    for name, text in (("log", hunt.log), ("metrics", hunt.metrics)):
        assert not [what for form, (_, what) in secrets.items() if form in text], name
        assert not [seed for seed in seeds if seed in text], name
        assert not cards_in(text), (name, cards_in(text))
    assert not [match.id for match in hunt.matches if match.id in hunt.metrics]
    seed_of = {match.id: match.seed for match in hunt.matches}
    assert len(hunt.webhooks) > len(MATCHES)
    for headers, body in hunt.webhooks:  # (a signature's base64 may read as a card)
        assert not [what for form, (_, what) in secrets.items() if form in headers + body]
        assert not cards_in(body), body
        message = json.loads(body)
        if message["type"] != "session.match_end":
            assert seed_of[message["data"]["session_id"]] not in body, body
    # Redis holds a token's or a key's digest (a reader's place is counted under it), never
    # the token or key; a webhook secret is kept whole, as its messages are signed with it.
    allowed = {
        "a token's digest", "a key's digest", "a webhook secret", "a webhook secret (a part)"
    }  # fmt: skip
    for stored in hunt.redis_dumps:
        assert {what for form, (_, what) in secrets.items() if form in stored} <= allowed
    assert digest(hunt.matches[1].tokens[0]) in hunt.redis_dumps[0]
