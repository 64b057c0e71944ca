"""Integrator keys (API_KEYS): who may create sessions, the owner's reads, its list of
sessions; over real HTTP on the in-process store, a real Redis and a real Redis Cluster."""

import subprocess
import sys
import time

import pytest
import requests

from service.errors import Problem
from service.hosted.tokens import digest
from service.keys import Integrators, new_key
from tests.service.sessions_client import create

ACME, OTHER = new_key(), new_key()
HOSTED_CONFIG = {"API_KEYS": f"acme:{digest(ACME)},other:{digest(OTHER)}"}
HUMANS = [{"type": "human"}, {"type": "human"}]
VERSUS_BOT = [{"type": "human"}, {"type": "bot", "level": "random"}]


@pytest.fixture(params=["memory", "redis", "cluster"])
def store_kind(request) -> str:
    return request.param


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def created(base: str, key: str = ACME, seats=HUMANS, **extra) -> dict:
    response = create(base, seats, headers=bearer(key), **extra)
    assert response.status_code == 201, response.text
    return response.json()


def post(base: str, body: dict, headers: dict | None = None) -> requests.Response:
    return requests.post(f"{base}/v1/sessions", json=body, headers=headers or {}, timeout=30)


def test_creation_needs_a_configured_key(base):
    body = {"game": "basra", "seats": HUMANS}
    session = created(base, spectators=1)
    seat_token, spectator = session["seats"][0]["token"], session["spectators"][0]["token"]
    for headers in ({}, bearer("key_nobody"), bearer(seat_token), bearer(spectator),
                    {"Authorization": "Basic x"}):  # fmt: skip
        refused = post(base, body, headers)
        assert refused.status_code == 401
        assert refused.headers["Content-Type"] == "application/problem+json"
        assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    assert post(base, body, bearer(OTHER)).status_code == 201


def test_the_owner_reads_what_a_spectator_reads_with_seats_and_owner(base):
    session = created(base, seats=VERSUS_BOT, spectators=1)
    url = f"{base}/v1/sessions/{session['id']}"
    owner = requests.get(url, headers=bearer(ACME), timeout=30).json()
    spectator = requests.get(url, headers=bearer(session["spectators"][0]["token"]), timeout=30)
    assert {k: v for k, v in owner.items() if k not in ("seats", "owner", "time_left")} == {
        k: v for k, v in spectator.json().items() if k != "time_left"
    }
    assert owner["seat"] is None and owner["moves"] == []
    assert owner["owner"] == "acme"
    assert owner["seats"] == [
        {"seat": 0, "type": "human", "absent": False},
        {"seat": 1, "type": "bot", "level": "random", "absent": False},
    ]
    assert "seed" not in owner["deal"]
    assert "token" not in str(owner["seats"])


def answered(response: requests.Response) -> tuple:
    """All of an answer but what differs from one request to the next."""
    headers = {k: v for k, v in response.headers.items() if k not in ("Date", "X-Request-ID")}
    return response.status_code, headers, response.content


def test_another_integrators_key_is_a_404_and_a_key_never_moves(base):
    session = created(base)
    url = f"{base}/v1/sessions/{session['id']}"
    missing = f"{base}/v1/sessions/{'0' * 26}"
    for method, path in [("GET", ""), ("DELETE", ""), ("GET", "/record"),
                         ("GET", "/events?after=0"), ("GET", "/stream"), ("POST", "/spectators"),
                         ("POST", "/moves")]:  # fmt: skip
        asked = [requests.request(method, f"{where}{path}", headers=bearer(OTHER),
                                  json={"move": {}, "version": 0}, timeout=30)
                 for where in (url, missing)]  # fmt: skip
        assert asked[0].status_code == 404, (method, path)
        assert answered(asked[0]) == answered(asked[1]), (method, path)
    move = requests.post(
        f"{url}/moves", json={"move": {}, "version": 0}, headers=bearer(ACME), timeout=30
    )
    assert move.status_code == 403
    assert requests.get(url, headers=bearer("key_nobody"), timeout=30).status_code == 401


def test_the_owner_follows_as_a_spectator_and_ends_the_session(base):
    session = created(base)
    url = f"{base}/v1/sessions/{session['id']}"
    seat = {"Authorization": f"Bearer {session['seats'][0]['token']}"}
    moves = requests.get(url, headers=seat, timeout=30).json()["moves"]
    played = requests.post(
        f"{url}/moves", json={"move": moves[0], "version": 0}, headers=seat, timeout=30
    )
    assert played.status_code == 200
    events = requests.get(f"{url}/events", params={"after": 0}, headers=bearer(ACME), timeout=30)
    assert events.status_code == 200 and events.json()
    spectator = requests.post(f"{url}/spectators", headers=seat, timeout=30).json()["token"]
    as_spectator = requests.get(
        f"{url}/events", params={"after": 0}, headers=bearer(spectator), timeout=30
    )
    assert events.json() == as_spectator.json()
    assert requests.delete(url, headers=bearer(ACME), timeout=30).status_code == 204
    assert requests.get(url, headers=bearer(ACME), timeout=30).status_code == 404


def test_a_key_follows_each_of_its_sessions_with_a_cap_of_its_own(open_hosted, store_kind):
    """A backend follows all its matches with its key: its streams and long polls are capped
    per session (MAX_WAITERS_PER_TOKEN), as each session's spectator token would be, not
    across every session the integrator owns."""
    sessions = open_hosted(MAX_WAITERS_PER_TOKEN=1)
    key = f"Bearer {ACME}"
    ids = [sessions.create({"game": "basra", "seats": HUMANS}, None, key)["id"] for _ in range(3)]
    streams = [sessions.stream(session_id, key, None) for session_id in ids]
    try:
        with pytest.raises(Problem) as refused:
            sessions.stream(ids[0], key, None)
        assert refused.value.status == 429
    finally:
        for stream in streams:
            stream.close()


def test_the_owner_sees_which_seats_are_absent(open_hosted, clock):
    """In its read and its list; reading with the key does not make a seat present."""
    sessions, key = open_hosted(), f"Bearer {ACME}"
    body = {"game": "bank", "seats": HUMANS, "turn_seconds": 30, "absent_after": 1}
    made = sessions.create(body, None, key)
    mover = sessions.read(made["id"], key)["view"]["turn"]
    clock.now += 31  # its time runs out: absent at once, its turns played by the server
    read = sessions.read(made["id"], key)
    assert [seat["absent"] for seat in read["seats"]] == [s == mover for s in range(2)]
    assert read["absent"] == [mover]
    assert sessions.listing(key, None, 20, None)["sessions"][0]["seats"] == read["seats"]


def listing(base: str, key: str = ACME, **params) -> requests.Response:
    return requests.get(f"{base}/v1/sessions", params=params, headers=bearer(key), timeout=30)


def test_the_list_is_the_integrators_own_newest_first_in_pages(base):
    mine = [created(base)["id"] for _ in range(5)]
    created(base, OTHER)
    first = listing(base, limit=2).json()
    assert [entry["id"] for entry in first["sessions"]] == mine[::-1][:2]
    second = listing(base, limit=2, cursor=first["next"]).json()
    third = listing(base, limit=2, cursor=second["next"]).json()
    assert [e["id"] for e in first["sessions"] + second["sessions"] + third["sessions"]] == mine[
        ::-1
    ]
    assert third["next"] is None
    entry = first["sessions"][0]
    assert set(entry) == {
        "id", "game", "status", "version", "created_at", "updated_at", "to_move", "seats",
    }  # fmt: skip
    assert entry["status"] == "playing" and entry["game"] == "basra"
    assert entry["seats"][0] == {"seat": 0, "type": "human", "absent": False}
    assert len(listing(base).json()["sessions"]) == 5


def test_the_list_filters_by_status_and_drops_ended_sessions(base):
    ended = created(base)
    playing = created(base)
    requests.delete(
        f"{base}/v1/sessions/{ended['id']}", headers=bearer(ACME), timeout=30
    ).raise_for_status()
    assert [e["id"] for e in listing(base).json()["sessions"]] == [playing["id"]]
    assert listing(base, status="playing").json()["sessions"][0]["id"] == playing["id"]
    assert listing(base, status="match_over").json() == {"sessions": [], "next": None}


def test_list_queries_are_read_within_their_bounds_and_a_bad_one_names_its_field(base):
    created(base)
    for limit in (1, 100):
        assert len(listing(base, limit=limit).json()["sessions"]) == 1
    for params, field in [
        ({"limit": 0}, "query.limit"), ({"limit": 101}, "query.limit"),
        ({"limit": "ten"}, "query.limit"), ({"limit": "1.5"}, "query.limit"),
        ({"limit": ""}, "query.limit"), ({"status": "x"}, "query.status"),
        ({"cursor": "nope"}, "query.cursor"), ({"cursor": "².nope"}, "query.cursor"),
    ]:  # fmt: skip
        refused = listing(base, **params)
        assert refused.status_code == 422
        assert list(refused.json()["errors"]) == [field], params


def test_paging_while_sessions_are_created_lists_each_earlier_one_once(open_hosted, clock):
    """A cursor is a place in the list: sessions created meanwhile are newer, so they come
    before it, and the pages after it hold every earlier session once, newest first."""
    sessions, key = open_hosted(), f"Bearer {ACME}"

    def new() -> str:
        clock.now += 1.0
        return sessions.create({"game": "basra", "seats": HUMANS}, None, key)["id"]

    earlier = [new() for _ in range(7)]
    seen, cursor = [], None
    while True:
        page = sessions.listing(key, None, 3, cursor)
        seen += [entry["id"] for entry in page["sessions"]]
        new()
        if (cursor := page["next"]) is None:
            break
    assert seen == earlier[::-1]


def test_expired_sessions_drop_out_of_the_list(open_hosted):
    sessions, key = open_hosted(SESSION_TTL_SECONDS=0.5), f"Bearer {ACME}"
    sessions.create({"game": "basra", "seats": HUMANS}, None, key)
    assert len(sessions.listing(key, None, 20, None)["sessions"]) == 1
    time.sleep(1.0)  # the session's idle TTL passes
    assert sessions.listing(key, None, 20, None) == {"sessions": [], "next": None}


def first_message(url: str, token: str) -> tuple[int, str, list]:
    """The first message of the session's stream from its start, as `token` reads it: its
    status, its Content-Type and the message's lines."""
    with requests.get(
        f"{url}/stream", params={"after": 0}, headers=bearer(token), stream=True, timeout=30
    ) as answer:
        lines: list[str] = []
        if answer.status_code == 200:
            for line in answer.iter_lines(decode_unicode=True):
                if line.startswith(("id:", "event:", "data:")):
                    lines.append(line)
                if line.startswith("data:"):
                    break
        return answer.status_code, answer.headers["Content-Type"], lines


def test_the_owner_streams_what_a_spectator_streams(base):
    session = created(base, seats=VERSUS_BOT, spectators=1)
    url = f"{base}/v1/sessions/{session['id']}"
    seat = bearer(session["seats"][0]["token"])
    answer = requests.get(url, headers=seat, timeout=30).json()
    move = {"move": answer["moves"][0], "version": answer["version"]}
    requests.post(f"{url}/moves", json=move, headers=seat, timeout=30).raise_for_status()
    status, kind, lines = first_message(url, ACME)
    assert status == 200 and kind.startswith("text/event-stream")
    assert lines[:2] == ["id: 1", "event: events"]
    assert lines == first_message(url, session["spectators"][0]["token"])[2]
    assert first_message(url, OTHER)[0] == 404


def test_a_caller_without_a_key_gets_its_401_before_anything_it_sent_is_read(base):
    for body in ({"game": "basra"}, {**{"game": "basra", "seats": HUMANS},
                                     "webhook": {"url": "ftp://x"}}):  # fmt: skip
        refused = requests.post(f"{base}/v1/sessions", json=body, timeout=30)
        assert refused.status_code == 401 and refused.headers["WWW-Authenticate"]
    refused = requests.get(f"{base}/v1/sessions", params={"limit": 0}, timeout=30)
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"]


def test_the_list_needs_a_key(base):
    seat_token = created(base)["seats"][0]["token"]
    for headers in ({}, bearer(seat_token)):
        refused = requests.get(f"{base}/v1/sessions", headers=headers, timeout=30)
        assert refused.status_code == 401
        assert refused.headers["WWW-Authenticate"].startswith("Bearer")


def test_api_keys_are_read_strictly():
    assert Integrators.parse(None).required is False
    keys = Integrators.parse(f" a:{digest('k1')}, b:{digest('k2')} ")
    assert keys.owner_of_key("k2") == "b" and keys.owner_of_key("k3") is None
    for bad in ("a", "a:xyz", f"a b:{digest('k')}", f"a:{digest('k').upper()}"):
        with pytest.raises(ValueError, match="API_KEYS"):
            Integrators.parse(bad)


def test_the_key_command_prints_a_fresh_key_and_its_entry():
    """And nothing else: run as a module the package imports, Python warned of it."""
    done = subprocess.run(
        [sys.executable, "-m", "service.keys", "new", "acme"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert done.stderr == ""
    out = done.stdout
    key = out.split("key (shown once, give it to the integrator): ")[1].split()[0]
    entry = out.split("API_KEYS entry: ")[1].split()[0]
    assert entry == f"acme:{digest(key)}"
    assert len(key) >= 32 and Integrators.parse(entry).owner_of_key(key) == "acme"


def test_a_session_listed_while_its_creation_is_under_way_is_listed_once_created(
    open_hosted, store_kind
):
    """On Redis the owner's list holds a new id just before the session is written (its own
    slot on a cluster): a listing in between must not drop it from the list for good."""
    if store_kind == "memory":
        pytest.skip("the in-process store lists a session as it writes it")
    sessions = open_hosted()
    store = sessions.store
    key = f"Bearer {ACME}"
    meanwhile = []
    run = store._run

    def listing_first(script, keys, args):
        if script is store._commit and args[9] != "":  # a creation's commit
            meanwhile.append(sessions.listing(key, None, 20, None))
        return run(script, keys, args)

    store._run = listing_first
    made = sessions.create({"game": "basra", "seats": HUMANS}, None, key)
    store._run = run
    assert meanwhile == [{"sessions": [], "next": None}]
    assert [e["id"] for e in sessions.listing(key, None, 20, None)["sessions"]] == [made["id"]]
