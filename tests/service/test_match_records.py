"""Match records: random matches of every game replayed from their record give the
session's own final views and events; tampered records are refused with their paths; a
finished match's record outlives its session. On the in-process store, a real Redis and a
real Redis Cluster."""

import hashlib
import random
import time

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.game import get_game
from engine.shapes import MAX_SEED_LENGTH
from service.errors import Problem
from service.hosted.tokens import digest
from service.keys import new_key
from service.replay import replay
from tests.service.core_matches import SHORT, bearer, check_replay, play_out

KEY = new_key()


@pytest.fixture(params=["memory", "redis", "cluster"])
def store_kind(request) -> str:
    return request.param


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    game=st.sampled_from(["basra", "bank"]),
    seed=st.text("abcdef0123456789", min_size=1, max_size=12),
    bot=st.sampled_from([None, "random", "greedy"]),
    picks=st.randoms(use_true_random=False),
)
def test_a_replayed_record_is_the_session_view_for_view_and_event_for_event(
    open_hosted, game, seed, bot, picks
):
    sessions = open_hosted()
    match = play_out(sessions, game, seed, picks, (None, bot))
    record = sessions.match_record(match["id"], bearer(match["tokens"][0]))
    assert record["status"] == "match_over" and record["seed"] == seed
    assert record["players"][1] == (
        {"seat": 1, "type": "bot", "level": bot} if bot else {"seat": 1, "type": "human"}
    )
    check_replay(sessions, match, record)
    assert record["outcome"]["winners"] and len(record["outcome"]["scores"]) == 2


# Both games' presets, seat counts and trump modes, bots beside humans, humans whose time
# runs out (absent after two timeouts in a row).
MATCHES = [
    ("basra", {"preset": "egyptian", "target_score": 1}, (None, None)),
    ("basra", {"preset": "levantine", "target_score": 1}, (None, "random", None, "greedy")),
    ("basra", {"preset": "egyptian", "target_score": 1}, (None, None, None, None)),
    ("bank", {"target_score": 1}, (None, None)),
    ("bank", {"target_score": 1, "trump_mode": "single", "after_seven": "draw_then_play"},
     (None, "greedy", None)),
    ("bank", {"target_score": 1, "trump_mode": "senior_junior", "after_capture": "free_lead"},
     (None, None, "random", None)),
    ("bank", {"target_score": 1, "trump_mode": "double", "after_capture": "turn_up",
              "after_seven": "skip_and_draw"}, (None, None, None)),
    ("bank", {"target_score": 1, "trump_mode": "none"}, (None, "random")),
]  # fmt: skip


@pytest.mark.parametrize(("game", "rules", "seats"), MATCHES)
def test_every_kind_of_match_replays_and_its_moves_are_what_apply_takes(
    open_hosted, clock, client, game, rules, seats
):
    """Timeouts included: the record replays to the session's views and events, and its
    moves, one after the other from `new` with its rules, seats and seed, are each taken by
    the stateless apply as they are written, ending in the replay's own final state."""
    sessions = open_hosted()
    match = play_out(sessions, game, "every-kind", random.Random(len(seats)), seats, rules,
                     clock, lapse=0.25, turn_seconds=30, absent_after=2)  # fmt: skip
    record = sessions.match_record(match["id"], bearer(match["tokens"][0]))
    assert set(get_game(game).catalogue()["options"]) <= set(record["rules"])  # all resolved
    assert rules.items() <= record["rules"].items()
    check_replay(sessions, match, record)
    assert {entry["by"] for entry in record["moves"]} >= {"human", "timeout"}
    assert len(record["players"]) == record["seats"] == len(seats)
    state = client.post(f"/v1/games/{game}/new", json={
        "rules": record["rules"], "seats": record["seats"], "seed": record["seed"],
    }).get_json()["state"]  # fmt: skip
    for entry in record["moves"]:
        move = {"state": state, "move": entry["move"]}
        applied = client.post(f"/v1/games/{game}/apply", json=move)
        assert applied.status_code == 200, (entry, applied.get_json())
        state = applied.get_json()["state"]
    assert state == replay(get_game(game), record)["state"]


@pytest.fixture
def finished(open_hosted):
    """A finished Basra match (the human against a bot), its core and its record."""
    sessions = open_hosted(API_KEYS=f"acme:{digest(KEY)}")
    match = play_out_owned(sessions)
    return sessions, match, sessions.match_record(match["id"], bearer(match["tokens"][0]))


def play_out_owned(sessions) -> dict:
    created = sessions.create(
        {"game": "basra", "rules": SHORT["basra"], "seed": "owned",
         "seats": [{"type": "human"}, {"type": "bot", "level": "greedy"}]},
        None, bearer(KEY),
    )  # fmt: skip
    token = created["seats"][0]["token"]
    while moves := (answer := sessions.read(created["id"], bearer(token)))["moves"]:
        sessions.move(
            created["id"], bearer(token),
            lambda a=answer, m=moves[0]: {"move": m, "version": a["version"]}, None,
        )  # fmt: skip
    return {**created, "tokens": {0: token}}


def refused(record: dict) -> dict:
    with pytest.raises(Problem) as error:
        replay(get_game("basra"), record)
    assert error.value.status == 422
    return error.value.errors


def dealt_from(seed: str) -> dict:
    """A record of no moves yet, its seed revealed: what replay deals from `seed`."""
    return {
        "format": "cards-record/1", "game": "basra", "rules": SHORT["basra"], "seats": 2,
        "players": [{"seat": 0, "type": "human"}, {"seat": 1, "type": "human"}],
        "commitment": hashlib.sha256(seed.encode()).hexdigest(), "seed": seed, "moves": [],
        "status": "playing", "outcome": None,
    }  # fmt: skip


def test_a_seed_longer_than_any_seed_is_refused_naming_it():
    """A record's seed is bounded as every seed is (contract-operations.md §1): replaying a
    longer one whose SHA-256 is the commitment answered a final state carrying it, a state
    the service itself refuses back (state.seed)."""
    longest = "s" * MAX_SEED_LENGTH
    assert replay(get_game("basra"), dealt_from(longest))["state"]["seed"] == longest
    assert list(refused(dealt_from(longest + "s"))) == ["record.seed"]


def test_a_tampered_record_is_refused_naming_what_does_not_check_out(finished):
    _, _, record = finished
    assert "record.seed" in refused({**record, "seed": "another"})
    assert "record.seed" in refused({**record, "seed": None})
    moves = record["moves"]
    wrong_seat = [*moves[:2], {**moves[2], "seat": 1 - moves[2]["seat"]}, *moves[3:]]
    assert "record.moves.2" in refused({**record, "moves": wrong_seat})
    illegal = [*moves[:3], {**moves[3], "move": {"card": "XX", "capture": []}}, *moves[4:]]
    assert "record.moves.3" in refused({**record, "moves": illegal})
    swapped = [moves[1], moves[0], *moves[2:]]
    assert "record.moves.0" in refused({**record, "moves": swapped})


def test_the_owner_and_every_token_read_the_record_and_nobody_else(finished):
    sessions, match, record = finished
    assert sessions.match_record(match["id"], bearer(KEY)) == record
    with pytest.raises(Problem) as error:
        sessions.match_record(match["id"], bearer("not-a-token"))
    assert error.value.status == 401


def test_a_finished_record_outlives_its_deleted_session(finished):
    sessions, match, record = finished
    sessions.delete(match["id"], bearer(match["tokens"][0]))
    assert sessions.match_record(match["id"], bearer(match["tokens"][0])) == record
    assert sessions.match_record(match["id"], bearer(KEY)) == record
    for wrong in ("not-a-token", new_key()):
        with pytest.raises(Problem):
            sessions.match_record(match["id"], bearer(wrong))


def test_a_spectator_token_added_after_the_end_reads_the_record_once_the_session_is_gone(
    finished,
):
    sessions, match, record = finished
    late = sessions.add_spectator(match["id"], bearer(match["tokens"][0]))["token"]
    assert sessions.match_record(match["id"], bearer(late)) == record
    sessions.delete(match["id"], bearer(match["tokens"][0]))
    assert sessions.match_record(match["id"], bearer(late)) == record


def test_an_unfinished_record_ends_with_its_session(open_hosted):
    sessions = open_hosted()
    created = sessions.create({"game": "bank", "seats": [{"type": "human"}] * 2}, None)
    token = bearer(created["seats"][0]["token"])
    assert sessions.match_record(created["id"], token)["seed"] is None
    sessions.delete(created["id"], token)
    with pytest.raises(Problem) as error:
        sessions.match_record(created["id"], token)
    assert error.value.status == 404


def test_a_record_is_kept_for_its_ttl_after_the_session_expired(open_hosted):
    sessions = open_hosted(SESSION_TTL_SECONDS=0.5, RECORD_TTL_SECONDS=3.0)
    match = play_out(sessions, "basra", "expiring", random.Random(1), (None, "greedy"))
    token = bearer(match["tokens"][0])
    time.sleep(1.0)  # the session's idle TTL passes
    with pytest.raises(Problem):
        sessions.read(match["id"], token)
    assert sessions.match_record(match["id"], token)["status"] == "match_over"
    time.sleep(2.5)  # and the record's
    with pytest.raises(Problem) as error:
        sessions.match_record(match["id"], token)
    assert error.value.status == 404


def test_a_deleted_sessions_record_is_kept_for_the_record_ttl_not_the_sessions(open_hosted):
    """RECORD_TTL_SECONDS counts from the end, also when it is shorter than the session's
    idle TTL: the session's reads and its end must not stretch it to the session's TTL."""
    sessions = open_hosted(RECORD_TTL_SECONDS=2.0)  # the session's TTL: a day
    match = play_out(sessions, "basra", "deleted", random.Random(2), (None, "greedy"))
    token = bearer(match["tokens"][0])
    sessions.read(match["id"], token)
    sessions.delete(match["id"], token)
    assert sessions.match_record(match["id"], token)["status"] == "match_over"
    time.sleep(2.5)  # the record's TTL passes
    with pytest.raises(Problem) as error:
        sessions.match_record(match["id"], token)
    assert error.value.status == 404


def test_over_http_the_record_replays_and_a_tampered_one_is_a_422(base):
    import requests

    seats = [{"type": "human"}, {"type": "bot", "level": "greedy"}]
    body = {"game": "basra", "rules": SHORT["basra"], "seats": seats, "seed": "http"}
    created = requests.post(f"{base}/v1/sessions", json=body, timeout=30).json()
    url, auth = (
        f"{base}/v1/sessions/{created['id']}",
        {"Authorization": bearer(created["seats"][0]["token"])},
    )
    while moves := (answer := requests.get(url, headers=auth, timeout=30).json())["moves"]:
        move = {"move": moves[0], "version": answer["version"]}
        requests.post(f"{url}/moves", json=move, headers=auth, timeout=30).raise_for_status()
    record = requests.get(f"{url}/record", headers=auth, timeout=30).json()
    replayed = requests.post(f"{base}/v1/games/basra/replay", json={"record": record}, timeout=30)
    assert replayed.status_code == 200
    assert replayed.json()["verified"] == {"commitment": True, "moves": len(record["moves"])}
    tampered = {"record": {**record, "seed": "other"}}
    refusal = requests.post(f"{base}/v1/games/basra/replay", json=tampered, timeout=30)
    assert refusal.status_code == 422
    assert refusal.headers["Content-Type"] == "application/problem+json"
    assert "record.seed" in refusal.json()["errors"]
    assert requests.get(f"{url}/record", timeout=30).status_code == 401


def test_a_record_larger_than_any_other_body_replays_up_to_max_record_bytes():
    """A whole match's record outgrows MAX_BODY_BYTES (a default three-seat Bank match's is
    ~70 KB, over the default 64 KB): the replay routes take records up to MAX_RECORD_BYTES,
    every other route keeps its bound."""
    from service import create_app

    client = create_app({"MAX_BODY_BYTES": 4096, "MAX_RECORD_BYTES": 500_000}).test_client()
    seats = [{"type": "human"}, {"type": "bot", "level": "greedy"}]
    body = {"game": "bank", "rules": SHORT["bank"], "seats": seats, "seed": "large"}
    created = client.post("/v1/sessions", json=body).get_json()
    url, auth = (
        f"/v1/sessions/{created['id']}",
        {"Authorization": bearer(created["seats"][0]["token"])},
    )
    while moves := (answer := client.get(url, headers=auth).get_json())["moves"]:
        move = {"move": moves[0], "version": answer["version"]}
        assert client.post(f"{url}/moves", json=move, headers=auth).status_code == 200
    record = client.get(f"{url}/record", headers=auth).get_json()
    assert len(orjson.dumps({"record": record})) > 4096
    replayed = client.post("/v1/games/bank/replay", json={"record": record})
    assert replayed.status_code == 200
    assert replayed.get_json()["verified"] == {"commitment": True, "moves": len(record["moves"])}
    assert (
        client.post("/v1/games/bank/score", json={"state": {"pad": "x" * 4096}}).status_code == 413
    )
    padded = client.post("/v1/games/bank/replay", json={"record": {**record, "pad": "x" * 500_000}})
    assert padded.status_code == 413
    assert padded.get_json()["detail"] == "the body is over the limit of 500000 bytes"


def test_a_long_replay_lets_the_workers_other_requests_run(monkeypatch):
    """Between its moves a replay yields (a greenlet under gevent) every
    MOVES_BETWEEN_YIELDS, as the server's own play does: a long match's record is
    thousands of moves, and no request may hold its worker that long."""
    from service import replay as replaying

    game, picks, seed = get_game("bank"), random.Random(5), "long"
    state, moves = game.new({"preset": "classic"}, 4, seed), []
    while (mover := game.to_move(state)) is not None:
        move = picks.choice(game.legal_moves(state))
        moves.append({"version": len(moves) + 1, "seat": mover, "by": "bot",
                      "move": game.write_move(state, move)})  # fmt: skip
        state, _ = game.apply(state, move)
    assert len(moves) > 2 * replaying.MOVES_BETWEEN_YIELDS
    record = {"rules": {"preset": "classic"}, "seats": 4, "seed": seed, "moves": moves,
              "commitment": hashlib.sha256(seed.encode()).hexdigest()}  # fmt: skip
    slept: list[float] = []
    monkeypatch.setattr(replaying.time, "sleep", slept.append)
    assert replay(game, record)["verified"]["moves"] == len(moves)
    assert len(slept) == (len(moves) - 1) // replaying.MOVES_BETWEEN_YIELDS
    assert set(slept) == {replaying.YIELD_SECONDS}


def test_a_record_read_while_a_move_is_committed_is_one_version_of_the_match(
    open_hosted, monkeypatch
):
    """The session is read, then its record: a move committed in between is left for the
    next read, not answered beside the head of the version before it (a final move beside
    a head that says playing)."""
    sessions = open_hosted()
    created = sessions.create({"game": "basra", "seats": [{"type": "human"}] * 2}, None)
    tokens = [bearer(seat["token"]) for seat in created["seats"]]
    read = sessions.store.record

    def moved_meanwhile(session_id: str) -> list[str] | None:
        views = [sessions.read(session_id, token) for token in tokens]
        seat = next(seat for seat, view in enumerate(views) if view["moves"])
        move = {"move": views[seat]["moves"][0], "version": views[seat]["version"]}
        sessions.move(session_id, tokens[seat], lambda: move, None)
        return read(session_id)

    monkeypatch.setattr(sessions.store, "record", moved_meanwhile)
    assert sessions.match_record(created["id"], tokens[0])["moves"] == []
    monkeypatch.setattr(sessions.store, "record", read)
    assert len(sessions.match_record(created["id"], tokens[0])["moves"]) == 1
