"""The stateless endpoints through Flask's test client."""

import random

import pytest

from engine.basra.cards import DECK
from engine.cards import ORDER

OPTION_NAMES = {
    "seats_allowed", "hand_size", "initial_table_redeal", "forced_capture", "capture_policy",
    "seven_diamonds_mode", "seven_diamonds_basra_max_sum", "table_seven_diamonds",
    "basra_points", "jack_basra_points", "last_card_basra_counts", "majority_points",
    "card_points", "tie_policy", "target_score",
}  # fmt: skip
STATE_KEYS = {
    "game", "rules", "seats", "dealer", "turn", "hands", "table", "stock", "captured",
    "basras", "last_capturer", "scores", "carry", "round", "status", "winner",
}  # fmt: skip
SIDE_KEYS = {"cards", "majority", "jacks", "aces", "two_clubs", "ten_diamonds", "basras", "total"}


def post(client, action: str, body: dict) -> dict:
    response = client.post(f"/v1/games/basra/{action}", json=body)
    assert response.status_code == 200, response.get_json()
    assert response.content_type == "application/json"
    return response.get_json()


def rejected(client, action: str, body: dict) -> dict[str, list[str]]:
    response = client.post(f"/v1/games/basra/{action}", json=body)
    assert response.status_code == 422, response.get_json()
    assert response.content_type == "application/problem+json"
    return response.get_json()["errors"]


def new_state(client, seed: str = "walk-through", **body) -> dict:
    return post(client, "new", {"seed": seed, **body})["state"]


def legal_moves(client, state: dict) -> list[dict]:
    return post(client, "legal-moves", {"state": state})["moves"]


def play_until(client, state: dict, event_type: str, rng: random.Random) -> tuple[dict, list]:
    """Uniform random moves until an event of `event_type` is reported."""
    while True:
        move = rng.choice(legal_moves(client, state))
        answer = post(client, "apply", {"state": state, "move": move})
        state = answer["state"]
        if any(event["type"] == event_type for event in answer["events"]):
            return state, answer["events"]


def test_new_game_defaults_to_two_levantine_seats_and_draws_a_seed(client):
    first = post(client, "new", {})["state"]
    second = post(client, "new", {})["state"]
    assert set(first) >= STATE_KEYS
    assert first["seats"] == 2 and first["rules"]["preset"] == "levantine"
    assert set(first["rules"]) >= OPTION_NAMES
    assert first["status"] == "playing" and first["round"] == 1 and first["winner"] is None
    assert isinstance(first["seed"], str) and first["seed"] != second["seed"]
    hands = [card for hand in first["hands"] for card in hand]
    assert sorted([*hands, *first["table"], *first["stock"]], key=ORDER.get) == list(DECK)


def test_new_game_without_a_body_at_all_is_a_default_game(client):
    response = client.post("/v1/games/basra/new")
    assert response.status_code == 200
    assert response.get_json()["state"]["seats"] == 2


def test_same_seed_and_rules_give_the_same_state_and_another_seed_another(client):
    body = {"seed": "s-1", "rules": {"preset": "egyptian"}, "seats": 4}
    assert post(client, "new", body) == post(client, "new", body)
    assert post(client, "new", {**body, "seed": "s-2"}) != post(client, "new", body)
    state = post(client, "new", body)["state"]
    assert state["seats"] == 4 and len(state["hands"]) == 4
    assert state["rules"]["preset"] == "egyptian" and state["seed"] == "s-1"


def test_new_game_rules_overrides_are_resolved_and_echoed(client):
    state = new_state(client, rules={"preset": "levantine", "hand_size": 6, "target_score": 50})
    assert state["rules"]["hand_size"] == 6 and state["rules"]["target_score"] == 50
    assert all(len(hand) == 6 for hand in state["hands"])


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"rules": {"preset": "martian"}}, "rules.preset"),
        ({"rules": {"hand_size": 5}}, "rules.hand_size"),
        ({"rules": {"no_such_option": 1}}, "rules.no_such_option"),
        ({"rules": {"preset": 7}}, "rules.preset"),
        ({"rules": []}, "rules"),
        ({"seats": 3}, "seats"),
        ({"seats": "2"}, "seats"),
        ({"seed": 12}, "seed"),
        ({"players": 2}, "players"),
    ],
)
def test_new_game_rejects_bad_fields_by_name(client, body, path):
    errors = rejected(client, "new", body)
    assert path in errors, errors
    assert all(isinstance(message, str) for message in errors[path])


def test_games_lists_basra_its_presets_and_every_option_with_its_default(client):
    response = client.get("/v1/games")
    assert response.status_code == 200
    (basra,) = [game for game in response.get_json()["games"] if game["name"] == "basra"]
    assert {"levantine", "egyptian"} <= set(basra["presets"])
    assert set(basra["options"]) == OPTION_NAMES
    assert basra["options"]["target_score"] == 121 and basra["options"]["hand_size"] == 4
    assert basra["presets"]["egyptian"]["target_score"] == 101


def test_legal_moves_are_the_movers_cards_without_duplicates_in_canonical_capture_order(client):
    state = new_state(client)
    moves = legal_moves(client, state)
    hand = state["hands"][state["turn"]]
    assert moves and {move["card"] for move in moves} == set(hand)
    keys = [(move["card"], tuple(move["capture"])) for move in moves]
    assert len(keys) == len(set(keys))
    for move in moves:
        assert {"card", "capture", "basra", "basra_points", "points"} <= set(move)
        assert isinstance(move["basra"], bool)
        assert move["capture"] == sorted(move["capture"], key=ORDER.get)
        assert set(move["capture"]) <= set(state["table"])


def test_the_state_accepts_cards_in_every_input_form(client):
    state = new_state(client)
    loose = {
        **state,
        "hands": [[card.lower().replace("t", "10") for card in hand] for hand in state["hands"]],
        "table": [card.lower() for card in state["table"]],
    }
    assert legal_moves(client, loose) == legal_moves(client, state)


def test_apply_plays_a_move_and_reports_it_and_the_old_state_still_holds(client):
    state = new_state(client)
    move = legal_moves(client, state)[0]
    answer = post(client, "apply", {"state": state, "move": move})
    after, events = answer["state"], answer["events"]
    assert events[0] == {
        "type": "move", "seat": state["turn"], "card": move["card"], "capture": move["capture"],
    }  # fmt: skip
    assert move["card"] not in after["hands"][state["turn"]]
    assert after["turn"] == (state["turn"] + 1) % 2
    assert legal_moves(client, state)[0] == move


def test_apply_accepts_lower_case_and_ten_as_10(client):
    state = new_state(client)
    move = legal_moves(client, state)[0]
    loose = {
        "card": move["card"].lower().replace("t", "10"),
        "capture": [card.lower() for card in move["capture"]],
    }
    assert post(client, "apply", {"state": state, "move": loose}) == post(
        client, "apply", {"state": state, "move": move}
    )


def test_apply_without_capture_takes_the_only_outcome_and_lists_several_otherwise(client):
    seen = set()
    for seed in range(100):
        state = new_state(client, seed=f"outcomes-{seed}", rules={"capture_policy": "any_family"})
        by_card: dict[str, list[list[str]]] = {}
        for move in legal_moves(client, state):
            by_card.setdefault(move["card"], []).append(move["capture"])
        for card, outcomes in by_card.items():
            if len(outcomes) == 1:
                played = post(client, "apply", {"state": state, "move": {"card": card}})
                assert played["events"][0]["capture"] == outcomes[0]
                seen.add("one")
            else:
                answer = client.post(
                    "/v1/games/basra/apply", json={"state": state, "move": {"card": card}}
                )
                assert answer.status_code == 422
                assert answer.get_json()["choices"] == {"move.capture": outcomes}
                reason = answer.get_json()["errors"]["move.capture"][0]
                assert all(" + ".join(outcome) in reason for outcome in outcomes if outcome)
                seen.add("several")
        if seen == {"one", "several"}:
            return
    pytest.fail(f"100 deals showed only {seen}")


def test_an_illegal_move_is_a_422_that_says_why(client):
    state = new_state(client)
    other_hand = state["hands"][1 - state["turn"]]
    errors = rejected(client, "apply", {"state": state, "move": {"card": other_hand[0]}})
    assert "not in hand" in errors["move.card"][0]
    card = state["hands"][state["turn"]][0]
    stock_card = state["stock"][0]
    errors = rejected(
        client, "apply", {"state": state, "move": {"card": card, "capture": [stock_card]}}
    )
    assert "move.capture" in errors


@pytest.mark.parametrize("card", ["1d", "11H", "XX", "", "7", "7DD", "ten"])
def test_a_move_with_something_that_is_not_a_card_names_the_value(client, card):
    state = new_state(client)
    errors = rejected(client, "apply", {"state": state, "move": {"card": card}})
    assert f'"{card}"' in errors["move.card"][0]


def test_a_capture_naming_a_non_card_is_rejected_at_its_index(client):
    state = new_state(client)
    card = state["hands"][state["turn"]][0]
    errors = rejected(client, "apply", {"state": state, "move": {"card": card, "capture": ["Z"]}})
    assert '"Z"' in errors["move.capture.0"][0]


def inconsistent_states(state: dict) -> list[tuple[dict, str]]:
    hands = state["hands"]
    return [
        ({**state, "hands": [[*hands[0][:2], "QQ", *hands[0][3:]], hands[1]]}, "state.hands.0.2"),
        ({**state, "table": [*state["table"], hands[0][0]]}, "state"),
        ({**state, "turn": 5}, "state.turn"),
        ({**state, "rules": {"preset": "levantine", "wild": True}}, "state.rules.wild"),
        ({key: value for key, value in state.items() if key != "round"}, "state.round"),
        ({**state, "hands": [[*hands[0], *hands[1]], []]}, "state.hands.0"),
        ({**state, "status": "paused"}, "state.status"),
    ]


@pytest.mark.parametrize("action", ["legal-moves", "score", "apply", "view"])
def test_an_inconsistent_state_is_a_422_naming_the_field(client, action):
    state = new_state(client)
    for bad, path in inconsistent_states(state):
        body = {"state": bad, "move": {"card": "AS"}, "seat": 0}
        body = {key: body[key] for key in {"apply": ("state", "move"), "view": ("state", "seat")}
                .get(action, ("state",))}  # fmt: skip
        errors = rejected(client, action, body)
        assert path in errors, (path, errors)


def test_score_breaks_down_each_side_and_sums_to_the_round_end_report(client):
    state = new_state(client, seed="score")
    sides = post(client, "score", {"state": state})["sides"]
    assert len(sides) == 2 and all(set(side) == SIDE_KEYS for side in sides)
    assert all(side["total"] == 0 for side in sides)
    state, events = play_until(client, state, "round_end", random.Random(1))
    (round_end,) = [event for event in events if event["type"] == "round_end"]
    assert all(set(side) == SIDE_KEYS for side in round_end["sides"])
    assert round_end["scores"] == state["scores"]
    assert state["round"] == 2 and any(event["type"] == "deal" for event in events)


def test_view_shows_a_seat_its_own_hand_and_only_counts_of_the_rest(client):
    state = new_state(client)
    view = post(client, "view", {"state": state, "seat": 1})["view"]
    assert view["hand"] == state["hands"][1]
    assert view["hand_sizes"] == [len(hand) for hand in state["hands"]]
    assert view["stock_size"] == len(state["stock"])
    assert "hands" not in view and "stock" not in view and "seed" not in view
    assert view["table"] == state["table"]


def test_view_of_a_seat_the_game_does_not_have_is_a_422(client):
    state = new_state(client)
    assert "seat" in rejected(client, "view", {"state": state, "seat": 2})
    assert "seat" in rejected(client, "view", {"state": state, "seat": -1})


def crowded_any_family_state(client) -> dict:
    """Cards laid down until the table holds more than the engine will list captures for."""
    rules = {"forced_capture": False, "capture_policy": "any_family"}
    state = new_state(client, seed="crowded", rules=rules)
    while True:
        response = client.post("/v1/games/basra/legal-moves", json={"state": state})
        if response.status_code == 422:
            return state
        lay = next(move for move in response.get_json()["moves"] if not move["capture"])
        state = post(client, "apply", {"state": state, "move": lay})["state"]


def test_a_state_with_too_many_moves_to_list_is_named_under_state_and_still_playable(client):
    state = crowded_any_family_state(client)
    assert list(rejected(client, "legal-moves", {"state": state})) == ["state.table"]
    statuses, named = set(), set()
    for card in state["hands"][state["turn"]]:
        move = {"card": card, "capture": []}
        response = client.post("/v1/games/basra/apply", json={"state": state, "move": move})
        statuses.add(response.status_code)
        if response.status_code == 422:
            named |= set(response.get_json()["errors"])
    assert 200 in statuses and statuses <= {200, 422}, statuses
    assert named <= {"state.table", "move.capture"}, named


def test_a_state_with_too_many_moves_to_list_is_hinted_as_a_bot_plays_it(client):
    """A hosted bot on such a table chooses among the moves Basra offers for it; the hint
    for it does the same, each alternative a move the state takes."""
    state = crowded_any_family_state(client)
    for level in ("random", "greedy", "expert"):
        hinted = post(client, "hint", {"state": state, "level": level, "seed": "crowded"})
        assert hinted["move"] in [option["move"] for option in hinted["alternatives"]]
        for option in hinted["alternatives"]:
            post(client, "apply", {"state": state, "move": option["move"]})
