"""POST /v1/games/basra/hint through Flask's test client."""

import random

import pytest

from engine.bots import LEVELS
from engine.game import get_game

GAME = get_game("basra")
HINT = "/v1/games/basra/hint"


def state_after(plies: int, seed: str = "hint", seats: int = 2) -> dict:
    state = GAME.new({"preset": "levantine"}, seats, seed)
    rng = random.Random(seed)
    for _ in range(plies):
        state, _ = GAME.apply(state, rng.choice(GAME.legal_moves(state)))
    return GAME.write(state)


def legal_moves(client, state: dict) -> list[dict]:
    response = client.post("/v1/games/basra/legal-moves", json={"state": state})
    assert response.status_code == 200
    return response.get_json()["moves"]


@pytest.mark.parametrize("level", LEVELS)
def test_hint_is_a_legal_move_with_every_alternative(client, level: str) -> None:
    state = state_after(5)
    response = client.post(HINT, json={"state": state, "level": level, "seed": "s"})
    assert response.status_code == 200
    body = response.get_json()
    moves = legal_moves(client, state)
    assert body["level"] == level
    assert body["move"] in moves
    assert [alternative["move"] for alternative in body["alternatives"]] == moves
    assert all(isinstance(alternative["value"], float) for alternative in body["alternatives"])


def test_expert_is_the_default_and_its_best_value_is_the_move(client) -> None:
    state = state_after(9, seats=4)
    body = client.post(HINT, json={"state": state, "seed": "x"}).get_json()
    assert body["level"] == "expert"
    best = max(body["alternatives"], key=lambda alternative: alternative["value"])
    assert best["value"] == next(
        alternative["value"]
        for alternative in body["alternatives"]
        if alternative["move"] == body["move"]
    )


def test_same_seed_same_hint(client) -> None:
    state = state_after(3)
    request = {"state": state, "level": "expert", "seed": "again"}
    assert client.post(HINT, json=request).get_json() == client.post(HINT, json=request).get_json()


def test_the_hinted_move_is_accepted_back_by_apply(client) -> None:
    state = state_after(7)
    move = client.post(HINT, json={"state": state, "level": "greedy"}).get_json()["move"]
    response = client.post("/v1/games/basra/apply", json={"state": state, "move": move})
    assert response.status_code == 200


def test_unknown_level_is_a_problem_naming_level(client) -> None:
    response = client.post(HINT, json={"state": state_after(0), "level": "grandmaster"})
    assert response.status_code == 422
    assert response.mimetype == "application/problem+json"
    assert "level" in response.get_json()["errors"]


def test_bad_state_is_a_problem_naming_the_field(client) -> None:
    state = state_after(0)
    state["table"] = ["ZZ", *state["table"][1:]]
    response = client.post(HINT, json={"state": state})
    assert response.status_code == 422
    assert response.mimetype == "application/problem+json"
    assert "state.table.0" in response.get_json()["errors"]


def test_missing_state_is_a_problem(client) -> None:
    response = client.post(HINT, json={"level": "random"})
    assert response.status_code == 422
    assert "state" in response.get_json()["errors"]


def test_no_hint_once_the_match_is_over(client) -> None:
    state = GAME.new({"preset": "levantine"}, 2, "over")
    while GAME.to_move(state) is not None:
        state, _ = GAME.apply(state, GAME.legal_moves(state)[0])
    response = client.post(HINT, json={"state": GAME.write(state), "level": "greedy"})
    assert response.status_code == 422
    assert response.mimetype == "application/problem+json"
    assert "state.status" in response.get_json()["errors"]


@pytest.mark.parametrize("level", LEVELS)
def test_no_hint_on_a_round_played_out_but_not_banked(client, level: str) -> None:
    # A valid state (contract: score on such a round) with no move for the seat to move.
    state = GAME.new({"preset": "levantine"}, 2, "played out")
    while state.stock or sum(map(len, state.hands)) > 1:
        state, _ = GAME.apply(state, GAME.legal_moves(state)[0])
    data = GAME.write(state)
    data["table"].append(data["hands"][data["turn"]].pop())
    data["turn"] = 1 - data["turn"]
    assert legal_moves(client, data) == []
    response = client.post(HINT, json={"state": data, "level": level})
    assert response.status_code == 422
    assert response.mimetype == "application/problem+json"
    assert "state" in response.get_json()["errors"]
