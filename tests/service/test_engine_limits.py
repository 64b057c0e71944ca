"""A state the engine reads but will not list moves for is a 422, never a 500."""

from engine.basra import Rules, apply, legal_moves, new_game
from engine.errors import TooLarge
from service import create_app


def crowded_state() -> dict:
    """A Basra state (JSON) whose table has too many `any_family` captures to list."""
    rules = Rules.from_json(
        {"preset": "levantine", "forced_capture": False, "capture_policy": "any_family"}
    )
    state = new_game(rules, 2, "crowded")
    while True:
        try:
            moves = legal_moves(state)
        except TooLarge:
            return state.to_json()
        state, _ = apply(state, next(move for move in moves if not move.capture))


def test_too_many_any_family_moves_is_a_problem_naming_the_table():
    answer = (
        create_app()
        .test_client()
        .post("/v1/games/basra/legal-moves", json={"state": crowded_state()})
    )
    assert answer.status_code == 422
    assert answer.mimetype == "application/problem+json"
    assert list(answer.json["errors"]) == ["state.table"]
