"""The stateless and hosted paths read new-game options, seeds and moves the same way:
the same input gives the same game, or the same 422 naming the same field."""

import pytest

from service import create_app

APP_CONFIG = {"CLIENT_SEEDS": True}

CROWDED_RULES = {"forced_capture": False, "capture_policy": "any_family"}


def stateless(client, action: str, body: dict):
    return client.post(f"/v1/games/basra/{action}", json=body)


def hosted(client, **body) -> tuple[str, list[dict]]:
    """A two-human session; its id and each seat's Authorization header."""
    seats = [{"type": "human"}, {"type": "human"}]
    response = client.post("/v1/sessions", json={"game": "basra", "seats": seats, **body})
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    return created["id"], [
        {"Authorization": f"Bearer {entry['token']}"} for entry in created["seats"]
    ]


def seat_view(client, session_id: str, auth: dict) -> dict:
    response = client.get(f"/v1/sessions/{session_id}", headers=auth)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


@pytest.mark.parametrize("seed", ["", "x", " "])
def test_a_given_seed_is_used_as_given_on_both_paths_the_empty_one_included(client, seed):
    state = stateless(client, "new", {"seed": seed}).get_json()["state"]
    assert state["seed"] == seed
    session_id, auths = hosted(client, seed=seed)
    for seat, auth in enumerate(auths):
        expected = stateless(client, "view", {"state": state, "seat": seat}).get_json()["view"]
        assert seat_view(client, session_id, auth)["view"] == expected


def test_without_a_seed_both_paths_draw_a_fresh_one():
    client = create_app({"REDIS_URL": None}).test_client()
    hands = {tuple(stateless(client, "new", {}).get_json()["state"]["hands"][0]) for _ in range(3)}
    assert len(hands) == 3
    views = set()
    for _ in range(3):
        session_id, auths = hosted(client)
        views.add(tuple(seat_view(client, session_id, auths[0])["view"]["hand"]))
    assert len(views) == 3


def test_both_paths_default_to_the_games_default_preset_and_reject_the_same_options(client):
    session_id, auths = hosted(client, seed="defaults")
    state = stateless(client, "new", {"seed": "defaults"}).get_json()["state"]
    assert seat_view(client, session_id, auths[0])["view"]["rules"] == state["rules"]
    for rules, path in [
        ({"preset": "martian"}, "rules.preset"),
        ({"hand_size": 5}, "rules.hand_size"),
    ]:
        errors = stateless(client, "new", {"rules": rules}).get_json()["errors"]
        seats = [{"type": "human"}, {"type": "human"}]
        answer = client.post("/v1/sessions", json={"seats": seats, "rules": rules})
        assert answer.status_code == 422
        assert answer.get_json()["errors"] == errors and path in errors


def crowded(client) -> tuple[dict, list[dict]]:
    """A state whose captures are too many to list, and the lays that lead to it."""
    state = stateless(client, "new", {"seed": "crowded", "rules": CROWDED_RULES}).get_json()
    state, lays = state["state"], []
    while (response := stateless(client, "legal-moves", {"state": state})).status_code == 200:
        lay = next(move for move in response.get_json()["moves"] if not move["capture"])
        lays.append(lay)
        state = stateless(client, "apply", {"state": state, "move": lay}).get_json()["state"]
    assert list(response.get_json()["errors"]) == ["state.table"]
    return state, lays


def test_a_position_with_too_many_moves_to_list_is_named_alike_on_both_paths(client):
    state, lays = crowded(client)
    session_id, auths = hosted(client, seed="crowded", rules=CROWDED_RULES)
    for version, lay in enumerate(lays):
        mover = auths[version % 2]  # seat 1 leads: turns alternate
        body = {"move": lay, "version": version}
        response = client.post(f"/v1/sessions/{session_id}/moves", json=body, headers=mover)
        if response.status_code == 403:
            mover = auths[(version + 1) % 2]
            response = client.post(f"/v1/sessions/{session_id}/moves", json=body, headers=mover)
        assert response.status_code == 200, response.get_json()
    mover, version = auths[state["turn"]], len(lays)
    moves = [
        move
        for card in state["hands"][state["turn"]]
        for move in ({"card": card}, {"card": card, "capture": [state["table"][0]]})
    ]
    named = set()
    for move in moves:
        answer = stateless(client, "apply", {"state": state, "move": move})
        assert answer.status_code == 422, move
        body = {"move": move, "version": version}
        response = client.post(f"/v1/sessions/{session_id}/moves", json=body, headers=mover)
        assert response.status_code == 422
        assert response.get_json()["errors"] == answer.get_json()["errors"], move
        named |= set(answer.get_json()["errors"])
    assert named == {"state.table", "move.capture"}
    lay = {"card": state["hands"][state["turn"]][0], "capture": []}
    after = stateless(client, "apply", {"state": state, "move": lay}).get_json()["state"]
    body = {"move": lay, "version": version}
    response = client.post(f"/v1/sessions/{session_id}/moves", json=body, headers=mover)
    assert response.status_code == 200
    expected = stateless(client, "view", {"state": after, "seat": state["turn"]}).get_json()
    assert response.get_json()["view"] == expected["view"]


def test_a_bad_move_is_named_alike_on_both_paths(client):
    state = stateless(client, "new", {"seed": "bad moves"}).get_json()["state"]
    session_id, auths = hosted(client, seed="bad moves")
    mover = auths[state["turn"]]
    other = state["hands"][1 - state["turn"]][0]
    for move in [{"card": "ZZ"}, {"card": other}, {"card": "7D", "capture": ["7D", "z"]}, {}]:
        errors = stateless(client, "apply", {"state": state, "move": move}).get_json()["errors"]
        body = {"move": move, "version": 0}
        response = client.post(f"/v1/sessions/{session_id}/moves", json=body, headers=mover)
        assert response.status_code == 422
        assert response.get_json()["errors"] == errors, move


def test_a_move_as_legal_moves_wrote_it_is_played_whole_on_both_paths(client):
    state = stateless(client, "new", {"seed": "whole"}).get_json()["state"]
    move = stateless(client, "legal-moves", {"state": state}).get_json()["moves"][0]
    assert {"basra", "basra_points", "points"} <= set(move)
    after = stateless(client, "apply", {"state": state, "move": move})
    assert after.status_code == 200
    session_id, auths = hosted(client, seed="whole")
    body = {"move": move, "version": 0}
    response = client.post(
        f"/v1/sessions/{session_id}/moves", json=body, headers=auths[state["turn"]]
    )
    assert response.status_code == 200
    assert response.get_json()["events"] == [
        {**event, "version": 1} for event in after.get_json()["events"]
    ]
