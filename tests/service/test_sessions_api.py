"""Hosted sessions through real HTTP, against the in-process store and a real Redis."""

import threading
import time
from collections import Counter
from collections.abc import Callable

import orjson
import pytest
import requests

from service.hosted.tokens import digest, opened
from tests.service.sessions_client import Seat, chosen, create, serve

HUMANS = [{"type": "human"}, {"type": "human"}]
VS_GREEDY = [{"type": "human"}, {"type": "bot", "level": "greedy"}]


def seats_of(base: str, answer: dict, received: list[bytes] | None = None) -> dict[int, Seat]:
    return {
        entry["seat"]: Seat(
            base, answer["id"], entry["token"], [] if received is None else received
        )
        for entry in answer["seats"]
        if "token" in entry
    }


def start(base: str, seats=HUMANS, **extra) -> tuple[dict, dict[int, Seat]]:
    response = create(base, seats, **extra)
    assert response.status_code == 201, response.text
    return response.json(), seats_of(base, response.json())


def settled(seats: dict[int, Seat], version: int) -> tuple[int, dict[int, dict]]:
    """Every holder's answer once the server's own play has come to rest. A move's answer
    may end where a bounded step of bot play stopped; a read resumes the rest, so read
    again until every holder sees one version at which a seat may move or the match is
    over."""
    for _ in range(500):
        views = {seat: holder.get().json() for seat, holder in seats.items()}
        versions = {view["version"] for view in views.values()}
        resting = any(view["moves"] for view in views.values()) or all(
            view["view"]["status"] == "match_over" for view in views.values()
        )
        if len(versions) == 1 and resting:
            (now,) = versions
            assert now >= version
            return now, views
    raise AssertionError("the server's play never came to rest")


def play_until_over(
    seats: dict[int, Seat], version: int, choose: Callable[[list, int], dict] = chosen
) -> tuple[int, int]:
    """Each seat plays a legal move (`choose` picks it from the listed ones) on its turn
    until the match ends; returns the final version and how many moves the humans made."""
    for made in range(5000):
        version, views = settled(seats, version)
        movers = [seat for seat, view in views.items() if view["moves"]]
        if not movers:
            return version, made
        (mover,) = movers
        response = seats[mover].move(choose(views[mover]["moves"], made), version)
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["version"] > version
        assert [e["version"] for e in answer["events"]] == sorted(
            e["version"] for e in answer["events"]
        )
        assert {e["version"] for e in answer["events"]} == set(
            range(version + 1, answer["version"] + 1)
        )
        version = answer["version"]
    raise AssertionError("the match did not end")


# -- whole games ---------------------------------------------------------------------------


def test_two_token_holders_play_a_whole_match(base):
    created, seats = start(base, seed="two humans")
    assert created["version"] == 0
    assert [entry["seat"] for entry in created["seats"]] == [0, 1]
    version, made = play_until_over(seats, 0)
    assert version == made  # one version per applied move
    events = seats[0].events(0).json()
    assert sum(event["type"] == "move" for event in events) == version
    assert events[-1]["type"] == "match_end"
    final = [seat.get().json()["view"] for seat in seats.values()]
    assert final[0]["scores"] == final[1]["scores"]
    assert max(final[0]["scores"]) >= 121


def test_a_human_plays_a_whole_match_against_the_greedy_bot(base):
    created, seats = start(base, VS_GREEDY, seed="human vs bot")
    assert created["seats"][1] == {"seat": 1, "type": "bot", "level": "greedy"}
    assert set(seats) == {0}
    version, made = play_until_over(seats, created["version"])
    events = seats[0].events(0).json()
    moves = [event for event in events if event["type"] == "move"]
    assert len(moves) == version
    assert Counter(event["seat"] for event in moves)[0] == made
    assert Counter(event["seat"] for event in moves)[1] > 0
    assert events[-1]["type"] == "match_end"


@pytest.mark.parametrize("game", ["basra", "bank"])
def test_every_answer_scores_the_round_as_it_stands(base, game):
    """`score` is game.score of the session's state: the same for every seat, grown by the
    captures of the round, and on the finished match the breakdown its round_end or
    deal_end event sent."""
    rules = {"preset": "levantine" if game == "basra" else "classic", "target_score": 1}
    created, seats = start(base, game=game, rules=rules, seed=f"{game} score")
    version, totals = created["version"], set()
    for _ in range(500):
        answers = [seat.get().json() for seat in seats.values()]
        assert all(answer["score"] == answers[0]["score"] for answer in answers)
        totals.add(tuple(side["total"] for side in answers[0]["score"]))
        mover = next((seat for seat, a in zip(seats, answers, strict=True) if a["moves"]), None)
        if mover is None:
            break
        moved = seats[mover].move(answers[mover]["moves"][0], version).json()
        assert moved["score"] == seats[mover].get().json()["score"]
        version = moved["version"]
    events = seats[0].events(0).json()
    (ending,) = [e for e in events if e["type"] in ("round_end", "deal_end")]
    assert answers[0]["view"]["status"] == "match_over"
    assert answers[0]["score"] == ending["sides"]
    assert len(totals) > 1  # the round's score moved while it was played


def test_bots_that_move_first_have_moved_at_creation(base):
    seats = [{"type": "bot", "level": "random"}, {"type": "human"}]
    # The dealer is the last seat, so seat 0 (the bot) leads.
    created, holders = start(base, seats, seed="bot leads")
    assert created["version"] == 1
    events = holders[1].events(0).json()
    assert events[0]["type"] == "move" and events[0]["seat"] == 0
    assert {event["version"] for event in events} == {1}
    view = holders[1].get().json()
    assert view["version"] == 1 and view["moves"]


# -- concurrency, idempotency ----------------------------------------------------------------


def test_of_64_concurrent_moves_on_one_version_exactly_one_is_applied(base):
    _, seats = start(base, seed="race")
    mover = seats[0].get().json()
    move = chosen(mover["moves"], 0)
    barrier = threading.Barrier(64)
    results: list[requests.Response] = []

    def submit() -> None:
        seat = Seat(base, seats[0].url.rsplit("/", 1)[1], seats[0].token, [])
        barrier.wait()
        results.append(seat.move(move, 0))

    threads = [threading.Thread(target=submit) for _ in range(64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = Counter(response.status_code for response in results)
    assert statuses == {200: 1, 409: 63}
    assert all(r.json()["version"] == 1 for r in results if r.status_code == 409)
    after = seats[1].get().json()
    assert after["version"] == 1
    assert after["view"]["hand_sizes"] == [3, 4]
    assert [e["type"] for e in seats[1].events(0).json()].count("move") == 1


def test_a_retried_move_gets_the_first_answer_and_is_applied_once(base):
    _, seats = start(base, seed="retry")
    move = chosen(seats[0].get().json()["moves"], 0)
    first = seats[0].move(move, 0, key="move-1")
    again = seats[0].move(move, 0, key="move-1")
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()
    assert seats[1].get().json()["version"] == 1
    other = seats[0].move({"card": move["card"]}, 0, key="move-1")
    assert other.status_code == 422
    assert "Idempotency-Key" in other.json()["errors"]
    assert seats[1].get().json()["version"] == 1


def test_a_retried_creation_gets_the_first_answer(base):
    headers = {"Idempotency-Key": "create-1"}
    body = {"game": "basra", "seats": HUMANS, "seed": "same"}
    first = requests.post(f"{base}/v1/sessions", json=body, headers=headers, timeout=10)
    again = requests.post(f"{base}/v1/sessions", json=body, headers=headers, timeout=10)
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    changed = requests.post(
        f"{base}/v1/sessions", json={**body, "seed": "other"}, headers=headers, timeout=10
    )
    assert changed.status_code == 422


def test_a_creations_kept_answer_holds_no_token_in_clear(sessions):
    """The answer a retried creation gets again holds the seats' tokens, which are otherwise
    kept only as digests: the store keeps it sealed under the Idempotency-Key, and only a
    retry with that key opens it."""
    body = {"game": "basra", "seats": HUMANS, "seed": "sealed"}
    first = sessions.create(body, "create-sealed")
    kept = sessions.store.remember_creation(digest("create-sealed"), "hold:probe", 30)
    assert kept is not None and not kept.startswith(("{", "hold:"))
    for seat in first["seats"]:
        assert seat["token"] not in kept
    assert first["id"] not in kept  # nothing of the answer shows
    assert sessions.create(body, "create-sealed") == first
    assert opened(kept, "create-other") is None


# -- what a seat may see ---------------------------------------------------------------------


def test_nothing_sent_to_seat_0_names_a_card_in_seat_1s_hand(base):
    received: list[bytes] = []
    response = create(base, HUMANS, seed="leak scan")
    received.append(response.content)
    created = response.json()
    zero = Seat(base, created["id"], created["seats"][0]["token"], received)
    one = Seat(base, created["id"], created["seats"][1]["token"], [])
    version, turn = 0, 0
    while True:
        hand = one.get().json()["view"]["hand"]
        mark = len(received)
        view = zero.get().json()
        if view["view"]["status"] == "match_over":
            break
        mover = zero if view["moves"] else one
        move = chosen(mover.get().json()["moves"], turn)
        answer = mover.move(move, version)
        assert answer.status_code == 200
        if mover is one:
            hand.remove(move["card"])  # on the table or in a pile now: public
        zero.events(version)
        version, turn = answer.json()["version"], turn + 1
        sent = b"".join(received[mark:])
        for card in hand:
            assert f'"{card}"'.encode() not in sent, card
            assert card.encode() not in sent.replace(b'"', b" "), card
    everything = b"".join(received)
    assert turn > 50
    # The seed is revealed once the match is over (the last view), never before.
    assert b"leak scan" not in b"".join(received[:-1])
    assert orjson.loads(received[-1])["deal"]["seed"] == "leak scan"
    assert b'"stock":[' not in everything and b'"hands"' not in everything


def test_a_seat_sees_its_own_hand_and_only_counts_of_the_rest(base):
    created, seats = start(base, seed="views")
    zero, one = seats[0].get().json(), seats[1].get().json()
    assert (zero["seat"], one["seat"]) == (0, 1)
    assert zero["id"] == created["id"]
    assert zero["view"]["hand"] != one["view"]["hand"]
    assert not set(zero["view"]["hand"]) & set(one["view"]["hand"])
    for answer in (zero, one):
        assert {"hands", "stock", "seed"}.isdisjoint(answer["view"])
        assert answer["view"]["hand_sizes"] == [4, 4]
        assert answer["view"]["stock_size"] == 40
    assert zero["moves"] and one["moves"] == []


# -- lifetime and errors ---------------------------------------------------------------------


def test_an_idle_session_expires(hosted_config):
    # Margins of a second or two: a loaded machine may take a while to answer.
    with serve({**hosted_config, "SESSION_TTL_SECONDS": 3.0}) as base:
        _, seats = start(base, seed="short")
        time.sleep(1.5)
        assert seats[0].get().status_code == 200  # activity refreshes the TTL
        time.sleep(1.5)
        assert seats[1].get().status_code == 200
        time.sleep(4.5)
        gone = seats[0].get()
        assert gone.status_code == 404
        assert gone.headers["Content-Type"] == "application/problem+json"


def test_delete_ends_the_session_for_every_seat(base):
    _, seats = start(base, seed="bye")
    response = seats[1].delete()
    assert response.status_code == 204 and response.content == b""
    # openapi.yaml documents a 204 without content: no Content-Type claims one (text/html).
    assert "Content-Type" not in response.headers
    for seat in seats.values():
        assert seat.get().status_code == 404
        assert seat.move({"card": "AS"}, 0).status_code == 404
        assert seat.events(0).status_code == 404
        assert seat.delete().status_code == 404


def test_tokens_are_required_and_checked(base):
    created, seats = start(base, seed="auth")
    url = seats[0].url
    missing = requests.get(url, timeout=10)
    assert missing.status_code == 401
    assert missing.headers["WWW-Authenticate"].startswith("Bearer")
    assert missing.headers["Content-Type"] == "application/problem+json"
    for header in ("Bearer nope", "Basic abc", "Bearer", seats[0].token):
        answer = requests.get(url, headers={"Authorization": header}, timeout=10)
        assert answer.status_code == 401, header
        assert answer.headers["WWW-Authenticate"].startswith("Bearer")
    _, others = start(base, seed="another")
    foreign = requests.get(url, headers={"Authorization": f"Bearer {others[0].token}"}, timeout=10)
    assert foreign.status_code == 401
    for call in (
        lambda: requests.post(f"{url}/moves", json={"move": {}, "version": 0}, timeout=10),
        lambda: requests.get(f"{url}/events", timeout=10),
        lambda: requests.delete(url, timeout=10),
    ):
        assert call().status_code == 401
    assert len(seats[0].token) >= 22 and seats[0].token != seats[1].token
    assert created["id"] not in (seats[0].token, seats[1].token)


def test_an_unknown_session_is_404_before_the_token_is_looked_at(base):
    unknown = Seat(base, "no-such-session", "whatever", [])
    assert unknown.get().status_code == 404
    assert unknown.move({"card": "AS"}, 99).status_code == 404
    assert unknown.events(0).status_code == 404
    assert requests.get(f"{base}/v1/sessions/no-such-session", timeout=10).status_code == 404


def test_a_404_does_not_echo_a_path_that_is_no_session_id(base):
    # A seat token put where the id goes (a client's slip) must not come back in the
    # problem's detail; nor does an id the service could have issued: a 404 is the same
    # whatever the id (another integrator's key is answered exactly as an unknown id).
    answer, seats = start(base)
    token = seats[0].token
    for path in (token, f"{token}/moves", f"{token}/events", f"{token}/record"):
        response = requests.get(f"{base}/v1/sessions/{path}", timeout=10,
                                headers={"Authorization": f"Bearer {token}"})  # fmt: skip
        assert response.status_code in (404, 405), response.text
        assert token not in response.text
    gone = requests.get(f"{base}/v1/sessions/{answer['id'][::-1]}", timeout=10).json()
    assert gone == requests.get(f"{base}/v1/sessions/{'0' * 26}", timeout=10).json()


@pytest.mark.parametrize(
    "path, params, headers",
    [
        ("events", {"after": "x"}, {}),
        ("events", {"after": "-1"}, {}),
        ("stream", {"after": "x"}, {}),
        ("stream", {}, {"Last-Event-ID": "seven"}),
    ],
)
def test_a_read_checks_session_then_token_before_its_position(base, path, params, headers):
    """As for a move: an unknown session is 404 and a missing or wrong token 401, whatever
    else is wrong with the call; a bad `after` or Last-Event-ID is a 422 only after those."""
    _, seats = start(base, seed="read order")
    unknown = f"{base}/v1/sessions/{'0' * 26}/{path}"
    url = f"{seats[0].url}/{path}"
    token = {"Authorization": f"Bearer {seats[0].token}"}
    for target, sent, status in [
        (unknown, token, 404),
        (unknown, {}, 404),
        (url, {}, 401),
        (url, {"Authorization": "Bearer nope"}, 401),
        (url, token, 422),
    ]:
        answer = requests.get(target, params=params, headers={**headers, **sent}, timeout=10)
        assert answer.status_code == status, (target, sent, answer.text)
        assert answer.headers["Content-Type"] == "application/problem+json"


def test_checks_run_in_order_version_then_turn_then_legality(base):
    _, seats = start(base, seed="order")
    hand_one = seats[1].get().json()["view"]["hand"]
    # Stale version and everything else wrong too: 409, carrying the current version.
    stale = seats[1].move({"card": "nonsense"}, 5)
    assert stale.status_code == 409
    assert stale.json()["version"] == 0
    assert stale.headers["Content-Type"] == "application/problem+json"
    # Right version, wrong seat, illegal move: 403.
    assert seats[1].move({"card": hand_one[0], "capture": ["XX"]}, 0).status_code == 403
    # Right version and seat, a card not in hand: 422 naming the field.
    hand_zero = seats[0].get().json()["view"]["hand"]
    illegal = seats[0].move({"card": hand_one[0], "capture": []}, 0)
    assert illegal.status_code == 422
    assert "move.card" in illegal.json()["errors"]
    assert hand_one[0] not in hand_zero
    bad_capture = seats[0].move({"card": hand_zero[0], "capture": ["2C", "2C"]}, 0)
    assert bad_capture.status_code == 422
    assert seats[0].get().json()["version"] == 0



@pytest.mark.parametrize("key", ["", "k" * 256])
def test_a_stale_version_is_409_whatever_is_wrong_with_the_key(base, key):
    """An Idempotency-Key of a length no key has is a 422 on the current version, and on a
    stale one a 409 like anything else wrong with the move (the contract's order)."""
    _, seats = start(base, seed="stale key")
    mover = next(seat for seat in seats.values() if seat.get().json()["moves"])
    url, bad_key = f"{mover.url}/moves", {"Idempotency-Key": key}
    current = mover.http.post(url, json={"move": {"card": "AS"}, "version": 0}, headers=bad_key)
    assert current.status_code == 422 and "Idempotency-Key" in current.json()["errors"]
    stale = mover.http.post(url, json={"move": {"card": "nonsense"}, "version": 3},
                            headers=bad_key)  # fmt: skip
    assert stale.status_code == 409, stale.text
    assert stale.json()["version"] == 0

def test_bad_bodies_are_problems_naming_the_field(base):
    _, seats = start(base, seed="bodies")
    url = f"{seats[0].url}/moves"
    http = seats[0].http
    cases = [
        ({"move": {"card": "AS"}}, "version"),
        ({"move": {"card": "AS"}, "version": "0"}, "version"),
        ({"version": 0}, "move"),
        ({"move": {"card": "ZZ"}, "version": 0}, "move.card"),
        ({"move": "AS", "version": 0}, "move"),
    ]
    for body, path in cases:
        answer = http.post(url, json=body, timeout=10)
        assert answer.status_code == 422, body
        assert path in answer.json()["errors"], (body, answer.json())
    assert http.post(url, data="{", headers={"Content-Type": "application/json"}).status_code == 400
    assert http.post(url, data="x", headers={"Content-Type": "text/plain"}).status_code == 415
    assert http.post(url, timeout=10).status_code == 422
    too_long = {"Idempotency-Key": "k" * 256}
    answer = http.post(url, json={"move": {"card": "AS"}, "version": 0}, headers=too_long)
    assert answer.status_code == 422 and "Idempotency-Key" in answer.json()["errors"]
    unknown = f"{base}/v1/sessions/nope/moves"
    assert http.post(unknown, json={}, headers=too_long).status_code == 404
    creations = [
        ({"seats": [{"type": "human"}]}, "seats"),
        ({"seats": [{"type": "human"}] * 3}, "seats"),
        ({"seats": [{"type": "bot", "level": "greedy"}] * 2}, "seats"),
        ({"seats": [{"type": "human"}, {"type": "bot"}]}, "seats.1.level"),
        ({"seats": [{"type": "human"}, {"type": "bot", "level": "god"}]}, "seats.1.level"),
        ({"seats": [{"type": "human"}, {"type": "alien"}]}, "seats.1.type"),
        ({"seats": HUMANS, "rules": {"preset": "martian"}}, "rules.preset"),
        ({"seats": HUMANS, "game": "chess"}, "game"),
        ({}, "seats"),
    ]
    for body, path in creations:
        answer = requests.post(f"{base}/v1/sessions", json=body, timeout=10)
        assert answer.status_code == 422, body
        assert path in answer.json()["errors"], (body, answer.json())


def test_a_finished_match_takes_no_more_moves(base):
    _, seats = start(base, seed="short match", rules={"target_score": 1})
    version, _ = play_until_over(seats, 0)
    assert seats[0].move({"card": "AS"}, version).status_code == 403


# -- events ------------------------------------------------------------------------------------


def test_events_come_at_once_when_there_are_some(base):
    _, seats = start(base, seed="events")
    move = chosen(seats[0].get().json()["moves"], 0)
    assert seats[0].move(move, 0).status_code == 200
    started = time.monotonic()
    events = seats[1].events(0).json()
    assert time.monotonic() - started < 1.5
    assert events[0] == {"type": "move", "seat": 0, "version": 1, **move}
    assert seats[1].events(1).json() == []  # after waiting LONG_POLL_SECONDS


def test_a_long_poll_wakes_when_the_other_seat_moves(base):
    _, seats = start(base, seed="wake")
    move = chosen(seats[0].get().json()["moves"], 0)
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(seats[1].events(0)))
    started = time.monotonic()
    waiter.start()
    time.sleep(0.3)
    assert seats[0].move(move, 0).status_code == 200
    waiter.join()
    assert time.monotonic() - started < 1.9
    assert got[0].status_code == 200
    assert got[0].json()[0]["card"] == move["card"]


def test_an_empty_long_poll_is_bounded(base):
    _, seats = start(base, seed="bounded")
    started = time.monotonic()
    answer = seats[0].events(0)
    assert answer.status_code == 200 and answer.json() == []
    assert 1.8 < time.monotonic() - started < 6
    for after in ("-1", "x", str(2**64)):
        assert seats[0].http.get(f"{seats[0].url}/events?after={after}").status_code == 422


# -- Redis going away --------------------------------------------------------------------------


def test_redis_stopping_is_a_503_and_the_app_recovers_when_it_returns(redis_server, redis_url):
    config = {"REDIS_URL": redis_url, "LONG_POLL_SECONDS": 1.0, "READY_GRACE_SECONDS": 0}
    with serve(config) as base:
        _, seats = start(base, seed="outage")
        redis_server.stop()
        try:
            for answer in (
                seats[0].get(),
                seats[0].move({"card": "AS"}, 0),
                seats[0].events(0),
                create(base, HUMANS),
                requests.get(f"{base}/readyz", timeout=10),
            ):
                assert answer.status_code == 503, answer.text
                assert answer.headers["Content-Type"] == "application/problem+json"
                assert int(answer.headers["Retry-After"]) >= 1
        finally:
            redis_server.start()
        assert requests.get(f"{base}/readyz", timeout=10).status_code == 200
        # The server kept no data (no persistence), so the old session is gone...
        assert seats[0].get().status_code == 404
        # ...and new ones work without restarting the app.
        _, fresh = start(base, seed="after outage")
        move = chosen(fresh[0].get().json()["moves"], 0)
        assert fresh[0].move(move, 0).status_code == 200


def test_two_app_processes_on_one_redis_never_move_on_a_stale_state(redis_url):
    """Each app keeps the latest version it saw; moves alternate between two apps, and
    stale versions are sent on purpose to the app whose copy is out of date."""
    with serve({"REDIS_URL": redis_url}) as one, serve({"REDIS_URL": redis_url}) as other:
        created, _ = start(one, seed="two apps")
        tokens = {entry["seat"]: entry["token"] for entry in created["seats"]}
        apps = [one, other]
        for version in range(60):
            here, there = apps[version % 2], apps[(version + 1) % 2]
            views = {seat: Seat(here, created["id"], token, []).get().json()
                     for seat, token in tokens.items()}  # fmt: skip
            assert {view["version"] for view in views.values()} == {version}
            (mover,) = [seat for seat, view in views.items() if view["moves"]]
            move = chosen(views[mover]["moves"], version)
            if version:
                stale = Seat(there, created["id"], tokens[mover], []).move(move, version - 1)
                assert stale.status_code == 409 and stale.json()["version"] == version
            answer = Seat(there, created["id"], tokens[mover], []).move(
                move, version, key=f"m{version}"
            )
            assert answer.status_code == 200, answer.text
            retried = Seat(here, created["id"], tokens[mover], []).move(
                move, version, key=f"m{version}"
            )
            assert retried.json() == answer.json()
        events = Seat(other, created["id"], tokens[1], []).events(0).json()
        assert [e["version"] for e in events if e["type"] == "move"] == list(range(1, 61))


def test_a_creation_key_expires_with_its_session(base):
    headers = {"Idempotency-Key": "create-2"}
    body = {"game": "basra", "seats": HUMANS, "seed": "once"}
    first = requests.post(f"{base}/v1/sessions", json=body, headers=headers, timeout=10).json()
    Seat(base, first["id"], first["seats"][0]["token"], []).delete()
    again = requests.post(f"{base}/v1/sessions", json=body, headers=headers, timeout=10)
    assert again.status_code == 201
    assert again.json()["id"] != first["id"]
    fresh = again.json()
    assert Seat(base, fresh["id"], fresh["seats"][1]["token"], []).get().status_code == 200


def test_four_seats_two_humans_and_two_bots_play_a_whole_match(base):
    seats = [{"type": "human"}, {"type": "bot", "level": "random"}] * 2
    created, holders = start(base, seats, seed="four", rules={"target_score": 60})
    assert set(holders) == {0, 2}
    version, _ = play_until_over(holders, created["version"])
    events = holders[2].events(0).json()
    movers = Counter(event["seat"] for event in events if event["type"] == "move")
    assert set(movers) == {0, 1, 2, 3}
    assert sum(movers.values()) == version
    view = holders[0].get().json()["view"]
    assert view["status"] == "match_over" and len(view["hand_sizes"]) == 4


# -- Bank ----------------------------------------------------------------------------------------

BANK = {"game": "bank", "rules": {"target_score": 30}}


def picked(moves: list[dict], turn: int) -> dict:
    """A legal Bank move from the list the server offers, sent back whole."""
    return moves[turn % len(moves)]


def assert_draws_hidden_from_others(events: list[dict], seat: int) -> None:
    draws = [event for event in events if event["type"] == "draw"]
    assert all((event["card"] is None) == (event["seat"] != seat) for event in draws), draws


@pytest.mark.parametrize(
    "kinds",
    [
        ["human", "expert"],
        ["human", "greedy", "expert"],
        ["random", "human", "human", "greedy"],
    ],
)
def test_bank_any_mix_of_humans_and_bots_plays_a_whole_match(base, kinds):
    seats = [{"type": "human"} if kind == "human" else {"type": "bot", "level": kind}
             for kind in kinds]  # fmt: skip
    created, holders = start(base, seats, seed=f"bank {len(kinds)}", **BANK)
    assert created["game"] == "bank" and len(created["seats"]) == len(kinds)
    assert set(holders) == {seat for seat, kind in enumerate(kinds) if kind == "human"}
    version, made = play_until_over(holders, created["version"], picked)
    assert made > 0
    for seat, holder in holders.items():
        events = holder.events(0).json()
        assert [event["version"] for event in events] == sorted(e["version"] for e in events)
        assert {event["version"] for event in events} == set(range(1, version + 1))
        assert {"deal_end", "match_end"} <= {event["type"] for event in events}
        movers = {event["seat"] for event in events if event["type"] in ("lay", "draw", "pass")}
        assert movers == set(range(len(kinds)))
        assert_draws_hidden_from_others(events, seat)
        view = holder.get().json()["view"]
        assert view["status"] == "match_over" and view["winners"]
        assert {"hands", "stock", "seed"}.isdisjoint(view) and len(view["hand_sizes"]) == len(kinds)


def test_bank_nothing_a_seat_receives_names_a_card_hidden_in_another_hand(base):
    received: dict[int, list[bytes]] = {0: [], 1: [], 2: []}
    response = create(base, [{"type": "human"}] * 3, seed="bank leak scan", **BANK)
    created = response.json()
    holders = {
        entry["seat"]: Seat(base, created["id"], entry["token"], received[entry["seat"]])
        for entry in created["seats"]
    }
    for seat in holders:
        received[seat].append(response.content)
    version, turn, deals = created["version"], 0, 0
    while True:
        marks = {seat: len(received[seat]) for seat in holders}
        before = {seat: holder.get().json() for seat, holder in holders.items()}
        if before[0]["view"]["status"] == "match_over":
            break
        (mover,) = [seat for seat, answer in before.items() if answer["moves"]]
        answer = holders[mover].move(picked(before[mover]["moves"], turn), version)
        assert answer.status_code == 200, answer.text
        for holder in holders.values():
            holder.events(version)
        version, turn = answer.json()["version"], turn + 1
        after = {seat: holder.get().json() for seat, holder in holders.items()}
        new_deal = any(event["type"] == "deal" for event in answer.json()["events"])
        deals += new_deal
        view = after[0]["view"]
        public = {entry["card"] for entry in view["bank"]}
        public |= {card for pile in view["captured"] for card in pile}
        for seat in holders:
            # A new deal hands out cards the last one showed: only its view is scanned then.
            sent = received[seat][-1] if new_deal else b"".join(received[seat][marks[seat] :])
            for other in set(holders) - {seat}:
                held = set(after[other]["view"]["hand"])
                if not new_deal:
                    held |= set(before[other]["view"]["hand"])
                for card in held - public:
                    assert f'"{card}"'.encode() not in sent, (seat, other, card)
    assert turn > 50 and deals >= 1
    for seat, holder in holders.items():
        assert_draws_hidden_from_others(holder.events(0).json(), seat)
        everything = b"".join(received[seat])
        # The seed is revealed in views of the finished match, never before.
        during = b"".join(data for data in received[seat] if b'"match_over"' not in data)
        assert b"bank leak scan" not in during
        assert b'"seed":"bank leak scan"' in everything
        assert b'"stock":[' not in everything and b'"hands"' not in everything


def test_bank_creations_with_bad_seats_or_rules_name_the_field(base):
    human = {"type": "human"}
    cases = [
        ({"seats": [human]}, "seats"),
        ({"seats": [human] * 5}, "seats"),
        ({"seats": [human, human], "rules": {"preset": "levantine"}}, "rules.preset"),
        ({"seats": [human, human], "rules": {"trump_mode": "wild"}}, "rules.trump_mode"),
        ({"seats": [human, {"type": "bot", "level": "god"}]}, "seats.1.level"),
    ]
    for body, path in cases:
        answer = requests.post(f"{base}/v1/sessions", json={"game": "bank", **body}, timeout=10)
        assert answer.status_code == 422, body
        assert path in answer.json()["errors"], (body, answer.json())


def test_bank_checks_versions_turns_keys_and_long_polls_like_basra(base):
    _, holders = start(base, seed="bank checks", **BANK)
    reads = {seat: holder.get().json() for seat, holder in holders.items()}
    (mover,) = [seat for seat, read in reads.items() if read["moves"]]
    waiting = 1 - mover
    move = reads[mover]["moves"][0]
    assert holders[waiting].move(move, 0).status_code == 403
    stale = holders[mover].move({"type": "fly"}, 3)
    assert stale.status_code == 409 and stale.json()["version"] == 0
    for bad, path in [({"type": "fly"}, "move.type"), ({"type": "lay", "card": "2C"}, "move.card"),
                      ({"type": "lay"}, "move.card")]:  # fmt: skip
        answer = holders[mover].move(bad, 0)
        assert answer.status_code == 422 and path in answer.json()["errors"], answer.json()
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(holders[waiting].events(0)))
    waiter.start()
    first = holders[mover].move(move, 0, key="bank-1")
    again = holders[mover].move(move, 0, key="bank-1")
    waiter.join()
    assert first.status_code == again.status_code == 200 and first.json() == again.json()
    assert got[0].status_code == 200
    assert got[0].json()[0] == {"seat": mover, "version": 1, **move}
    assert holders[waiting].get().json()["version"] == 1
    # A draw's card reaches the drawer only, in its answer and in every long poll.
    version = 1
    for _ in range(200):
        reads = {seat: holder.get().json() for seat, holder in holders.items()}
        (mover,) = [seat for seat, read in reads.items() if read["moves"]]
        draw = next((m for m in reads[mover]["moves"] if m["type"] == "draw"), None)
        chosen_move = draw or reads[mover]["moves"][0]
        answer = holders[mover].move(chosen_move, version).json()
        if draw is not None:
            assert_draws_hidden_from_others(answer["events"], mover)
            assert answer["events"][0]["card"] in answer["view"]["hand"]
            seen = holders[1 - mover].events(version).json()
            assert seen[0] == {"type": "draw", "seat": mover, "card": None, "forced": False,
                               "version": version + 1}  # fmt: skip
            return
        version = answer["version"]
    raise AssertionError("nobody drew in 200 moves")
