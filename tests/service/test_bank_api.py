"""Bank's stateless endpoints and hints through Flask's test client: the same generic
routes as Basra's, with Bank's own state, moves and errors."""

import random

import pytest

STATE_KEYS = {
    "game", "rules", "seats", "dealer", "trumps", "hands", "stock", "bank", "target", "turn",
    "drawn", "out", "captured", "idle", "starter", "scores", "deal", "status", "winner",
    "winners", "tiebreak",
}  # fmt: skip
SIDE_KEYS = {"captured_points", "finish", "place", "bonus", "penalty", "total"}
PACK = {rank + suit for rank in "6789TJQKA" for suit in "CDHS"}


def post(client, action: str, body: dict) -> dict:
    response = client.post(f"/v1/games/bank/{action}", json=body)
    assert response.status_code == 200, response.get_json()
    assert response.content_type == "application/json"
    return response.get_json()


def rejected(client, action: str, body: dict) -> dict[str, list[str]]:
    response = client.post(f"/v1/games/bank/{action}", json=body)
    assert response.status_code == 422, response.get_json()
    assert response.content_type == "application/problem+json"
    errors = response.get_json()["errors"]
    assert all(isinstance(m, str) and m for messages in errors.values() for m in messages)
    return errors


def every_card(state: dict) -> list[str]:
    return [
        *(card for hand in state["hands"] for card in hand),
        *state["stock"],
        *(entry["card"] for entry in state["bank"]),
        *(card for pile in state["captured"] for card in pile),
    ]


def test_the_catalogue_lists_bank_with_its_seats_preset_and_options(client):
    (bank,) = [
        game for game in client.get("/v1/games").get_json()["games"] if game["name"] == "bank"
    ]
    assert bank["seats"] == [2, 3, 4] and bank["default_preset"] == "classic"
    assert bank["options"]["target_score"] == 248
    assert bank["options"]["trump_mode"] == "per_player"
    assert bank["presets"]["classic"] == {"preset": "classic", **bank["options"]}


def test_a_stateless_round_trip_new_legal_moves_apply_score_view(client):
    state = post(client, "new", {"seed": "round trip"})["state"]
    assert set(state) >= STATE_KEYS and state["game"] == "bank"
    assert state["seats"] == 2 and state["rules"]["preset"] == "classic"
    assert state["deal"] == 1 and state["scores"] == [0, 0] and state["seed"] == "round trip"
    assert sorted(every_card(state)) == sorted(PACK)
    assert post(client, "new", {"seed": "round trip"})["state"] == state

    moves = post(client, "legal-moves", {"state": state})["moves"]
    assert moves and len({str(sorted(move.items())) for move in moves}) == len(moves)
    hand = state["hands"][state["turn"]]
    assert all(move["card"] in hand for move in moves if move["type"] == "lay")

    mover = state["turn"]
    applied = post(client, "apply", {"state": state, "move": moves[0]})
    after, events = applied["state"], applied["events"]
    assert events[0]["type"] == moves[0]["type"] and events[0]["seat"] == mover
    assert sorted(every_card(after)) == sorted(PACK)
    assert post(client, "apply", {"state": state, "move": moves[0]}) == applied

    sides = post(client, "score", {"state": after})["sides"]
    assert len(sides) == 2 and all(set(side) == SIDE_KEYS for side in sides)
    assert all(side["penalty"] == 0 for side in sides)

    for seat in (0, 1):
        view = post(client, "view", {"state": after, "seat": seat})["view"]
        assert {"hands", "stock", "seed"}.isdisjoint(view)
        assert view["seat"] == seat and view["hand"] == after["hands"][seat]
        assert view["hand_sizes"] == [len(hand) for hand in after["hands"]]
        assert view["stock_size"] == len(after["stock"])
        assert view["bank"] == after["bank"] and view["trumps"] == after["trumps"]


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_random_play_reaches_the_end_of_a_match_with_each_seat_count(client, seats):
    rng = random.Random(seats)
    state = post(client, "new", {"seed": f"seats {seats}", "seats": seats,
                                 "rules": {"target_score": 30}})["state"]  # fmt: skip
    seen = set()
    while state["status"] == "playing":
        moves = post(client, "legal-moves", {"state": state})["moves"]
        applied = post(client, "apply", {"state": state, "move": rng.choice(moves)})
        state = applied["state"]
        seen |= {event["type"] for event in applied["events"]}
    assert {"deal_end", "match_end"} <= seen
    assert state["turn"] is None and state["winners"]
    assert post(client, "legal-moves", {"state": state})["moves"] == []


def test_rules_overrides_are_resolved_and_echoed(client):
    rules = {"trump_mode": "senior_junior", "after_seven": "draw_then_play", "target_score": 100}
    state = post(client, "new", {"seed": "rules", "seats": 3, "rules": rules})["state"]
    assert {key: state["rules"][key] for key in rules} == rules
    assert state["trumps"]["common"] == {"C": 0, "D": 1, "H": 0, "S": 2}
    assert state["trumps"]["personal"] == [None, None, None]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"seats": 5}, "seats"),
        ({"seats": 1}, "seats"),
        ({"seats": "3"}, "seats"),
        ({"rules": {"preset": "levantine"}}, "rules.preset"),
        ({"rules": {"trump_mode": "wild"}}, "rules.trump_mode"),
        ({"rules": {"fixed_penalty": 7}}, "rules.fixed_penalty"),
        ({"rules": {"hand_size": 6}}, "rules.hand_size"),
        ({"seed": 7}, "seed"),
    ],
)
def test_new_rejects_bad_fields_by_name(client, body, path):
    assert path in rejected(client, "new", body)


def bad_states(state: dict) -> list[tuple[dict, str]]:
    hands = state["hands"]
    other = {"C": 1, "D": 0, "H": 0, "S": 0}
    return [
        ({**state, "hands": [[*hands[0], hands[0][0]], hands[1]]}, "state.hands.0.4"),
        ({**state, "hands": [["2C", *hands[0][1:]], hands[1]]}, "state.hands.0.0"),
        ({**state, "trumps": {**state["trumps"], "common": other}}, "state.trumps.common.C"),
        ({**state, "target": None}, "state.target"),
        ({**state, "deal": 0}, "state.deal"),
        ({**state, "game": "basra"}, "state.game"),
        ({key: value for key, value in state.items() if key != "bank"}, "state.bank"),
    ]


@pytest.mark.parametrize("action", ["legal-moves", "apply", "score", "view", "hint"])
def test_an_inconsistent_state_is_a_422_naming_the_field(client, action):
    state = post(client, "new", {"seed": "bad states"})["state"]
    extra = {"apply": {"move": {"type": "draw"}}, "view": {"seat": 0}}.get(action, {})
    for bad, path in bad_states(state):
        assert path in rejected(client, action, {"state": bad, **extra}), path


def test_a_bad_or_illegal_move_is_a_422_naming_the_move_field(client):
    state = post(client, "new", {"seed": "bad moves"})["state"]
    other_hand = state["hands"][1 - state["turn"]]
    cases = [
        ({"type": "fly"}, "move.type"),
        ({"card": state["hands"][state["turn"]][0]}, "move.type"),
        ({"type": "lay"}, "move.card"),
        ({"type": "lay", "card": "2C"}, "move.card"),
        ({"type": "lay", "card": "ZZ"}, "move.card"),
        ({"type": "lay", "card": other_hand[0]}, "move.card"),
        ({"type": "quad", "cards": ["6C"]}, "move.cards"),
        ({"type": "run", "cards": "6C"}, "move.cards"),
        ({"type": "pass"}, "move.type"),
        ("draw", "move"),
    ]
    for move, path in cases:
        assert path in rejected(client, "apply", {"state": state, "move": move}), move


def test_view_of_a_seat_the_state_does_not_have_is_a_422(client):
    state = post(client, "new", {"seed": "seats", "seats": 3})["state"]
    assert post(client, "view", {"state": state, "seat": 2})["view"]["seat"] == 2
    for seat in (3, -1, "1"):
        assert "seat" in rejected(client, "view", {"state": state, "seat": seat})


def test_a_hint_is_a_legal_move_and_accepted_back_by_apply(client):
    state = post(client, "new", {"seed": "hint", "seats": 3})["state"]
    moves = post(client, "legal-moves", {"state": state})["moves"]
    for level in ("random", "greedy", "expert"):
        body = {"state": state, "level": level, "seed": "s"}
        hint = post(client, "hint", body)
        assert hint["level"] == level and hint["move"] in moves
        assert [option["move"] for option in hint["alternatives"]] == moves
        assert post(client, "hint", body) == hint
        post(client, "apply", {"state": state, "move": hint["move"]})
    assert "level" in rejected(client, "hint", {"state": state, "level": "god"})
