"""Spectator tokens over real HTTP on both stores: created with the session or by a seat,
they read the session, the long poll and the stream with public information only, and
never move. The leak scan follows every byte a spectator receives over whole matches."""

import json
import re
from collections import defaultdict

import pytest
import requests

from engine.game import get_game
from tests.service.live_client import Replica, Stream
from tests.service.sessions_client import Seat

CARD = re.compile(r'"([2-9TJQKA][CDHS])"')
HUMANS = [{"type": "human"}, {"type": "human"}]
# Short matches (a low target) that still run deal after deal to the match's end.
RULES = {
    "basra": {"preset": "levantine", "target_score": 1},
    "bank": {"preset": "classic", "target_score": 40},
}


def create(base: str, game: str = "basra", **extra) -> requests.Response:
    body = {"game": game, "rules": RULES[game], "seats": HUMANS, **extra}
    return requests.post(f"{base}/v1/sessions", json=body, timeout=30)


def started(base: str, game: str = "basra", **extra) -> tuple[dict, dict[int, Seat], list[Seat]]:
    response = create(base, game, **extra)
    assert response.status_code == 201, response.text
    created = response.json()
    seats = {
        entry["seat"]: Seat(base, created["id"], entry["token"], []) for entry in created["seats"]
    }
    watchers = [Seat(base, created["id"], entry["token"], []) for entry in created["spectators"]]
    return created, seats, watchers


def test_spectator_tokens_come_with_the_session_when_asked(base):
    created, _, watchers = started(base, spectators=3)
    assert len(watchers) == 3
    tokens = [entry["token"] for entry in created["spectators"]]
    assert len(set(tokens)) == 3
    assert not {entry["token"] for entry in created["seats"]} & set(tokens)
    assert started(base)[0]["spectators"] == []


@pytest.mark.parametrize(
    "count, reason",
    [(17, "between 0 and 16"), (-1, "between 0 and 16"), ("2", "integer"), (True, "integer")],
)
def test_a_bad_spectator_count_is_a_422_naming_it(base, count, reason):
    response = create(base, spectators=count)
    assert response.status_code == 422
    assert response.headers["Content-Type"] == "application/problem+json"
    assert list(response.json()["errors"]) == ["spectators"]
    assert reason in " ".join(response.json()["errors"]["spectators"]).lower().replace(
        "greater than or equal to 0 and less than or equal to 16", "between 0 and 16"
    )


def test_a_spectator_reads_public_information_only(base):
    created, _seats, (watcher,) = started(base, spectators=1)
    answer = watcher.get()
    assert answer.status_code == 200
    body = answer.json()
    assert body["seat"] is None and body["moves"] == []
    assert body["version"] == created["version"]
    assert not {"hand", "hands", "stock", "seed"} & set(body["view"])
    assert body["view"]["hand_sizes"] == [4, 4]
    assert body["deadline"] is None and body["absent"] == []
    assert watcher.events(0).status_code == 200


def test_a_spectator_cannot_move_delete_or_add_spectators(base):
    _created, seats, (watcher,) = started(base, spectators=1)
    move = seats[0].get().json()["moves"][0]
    for version in (0, 7):  # stale or not: a spectator's move is a 403
        refused = watcher.move({"card": move["card"], "capture": move["capture"]}, version)
        assert refused.status_code == 403
        assert "spectator" in refused.json()["detail"]
    assert watcher.delete().status_code == 403
    more = watcher.http.post(f"{watcher.url}/spectators", timeout=10)
    assert more.status_code == 403
    assert seats[0].get().json()["version"] == 0  # nothing moved


def test_any_seat_adds_spectators_up_to_sixteen(base):
    created, seats, _ = started(base, spectators=14)
    added = [seats[seat].http.post(f"{seats[seat].url}/spectators", timeout=10) for seat in (0, 1)]
    assert [response.status_code for response in added] == [201, 201]
    for response in added:
        token = response.json()["token"]
        reader = Seat(base, created["id"], token, [])
        assert reader.get().json()["seat"] is None
    full = seats[0].http.post(f"{seats[0].url}/spectators", timeout=10)
    assert full.status_code == 409
    assert "16" in full.json()["detail"]
    nobody = requests.post(f"{seats[0].url}/spectators", timeout=10)
    assert nobody.status_code == 401
    gone = requests.post(
        f"{base}/v1/sessions/{'0' * 26}/spectators",
        headers={"Authorization": f"Bearer {seats[0].token}"},
        timeout=10,
    )
    assert gone.status_code == 404


def test_a_spectator_added_later_does_not_undo_a_move_nor_is_undone_by_one(base):
    created, seats, _ = started(base)
    move = seats[0].get().json()["moves"][0]
    token = seats[1].http.post(f"{seats[1].url}/spectators", timeout=10).json()["token"]
    # Seat 0 moves on the version it read before the spectator was added.
    assert seats[0].move({"card": move["card"], "capture": move["capture"]}, 0).status_code == 200
    reader = Seat(base, created["id"], token, [])
    assert reader.get().json()["version"] == 1


def cards_in(text: str) -> set[str]:
    """Every card named in a JSON text."""
    return set(CARD.findall(text))


def by_version(events: list[dict]) -> dict[int, set[str]]:
    """The cards each version's events name."""
    named: dict[int, set[str]] = defaultdict(set)
    for event in events:
        named[event["version"]] |= cards_in(json.dumps(event))
    return named


@pytest.mark.parametrize("game", ["basra", "bank"])
def test_nothing_sent_to_a_spectator_over_a_whole_match_names_a_hidden_card(base, game):
    """A view at a version names no card in a hand or the stock then; a version's events
    name only cards that every seat's copy of them names (what is public)."""
    seed = f"spectator leak scan {game}"
    _created, seats, (watcher,) = started(base, game, seed=seed, spectators=1)
    replica = Replica(get_game(game), RULES[game], 2, seed)
    views: list[tuple[int, str]] = []  # (version, text) of every view a spectator got
    events: list[dict] = []  # every event a spectator got from the long poll

    with Stream(watcher.url, watcher.token, params={"after": 0}) as stream:
        version, turn = 0, 0
        while True:
            answer = watcher.get()
            assert answer.status_code == 200
            views.append((version, answer.text))
            seen = {seat: holder.get().json() for seat, holder in seats.items()}
            movers = [seat for seat, view in seen.items() if view["moves"]]
            if not movers:
                break
            (mover,) = movers
            move = seen[mover]["moves"][turn % len(seen[mover]["moves"])]
            moved = seats[mover].move(move, version)
            assert moved.status_code == 200, moved.text
            replica.play(move)
            polled = watcher.events(version)
            assert polled.status_code == 200
            events += polled.json()
            version, turn = moved.json()["version"], turn + 1
        stream.until_version(version)
        public = [by_version(holder.events(0).json()) for holder in seats.values()]
        seats[0].delete()
        assert stream.wait_for(lambda s: s.closed)
    assert seen[0]["view"]["status"] == "match_over"
    assert turn > 10
    assert len(replica.states) == version + 1
    assert stream.messages[-1].event == "end"
    assert stream.versions() == list(range(1, version + 1))

    for shown, text in views:
        assert not cards_in(text) & replica.hidden(shown), shown
    streamed = stream.events()
    assert streamed == events
    for number, named in by_version(events + streamed).items():
        assert named <= public[0][number] & public[1][number], number
    # The seed is revealed once the match is over (the deal's commitment), not before.
    assert seed in views[-1][1]
    everything = bytes(stream.raw) + b"".join(text.encode() for _, text in views[:-1])
    assert seed.encode() not in everything
    assert b'"stock":[' not in everything and b'"hands"' not in everything
    assert b'"hand":' not in everything
    if game == "bank":
        draws = [event for event in streamed if event["type"] == "draw"]
        assert draws and all(event["card"] is None for event in draws)
