"""The stateless endpoints on positions reached by random play from `new`, over Flask's test
client, for every registered game: every field of a position the service wrote, given a
value of the wrong type, is a 422 problem naming that field; and every listed move applied
in its written form (the move's own fields, without the ones the server adds) plays as the
listed move does, into a state the service accepts back."""

import copy
import random
from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.game import games

# Rule overrides that end a match within a few rounds or deals, for a game that has them.
SHORT = {"target_score": 30}
# Values no field of the shipped games' states ever holds (a seed aside, which takes any
# string). Another game's string or list field may take "x" or []: its fields get only the
# values of other types.
WRONG = [1.5, "x", [], {}]
# The fields the contracts of the shipped games name for a move; the server adds others to
# the moves it lists. Another game's listed move is its written form.
MOVE_FIELDS = {"basra": {"type", "card", "cards", "capture"}, "bank": {"type", "card", "cards"}}

Path = tuple[str | int, ...]


def post(client, game: str, action: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(f"/v1/games/{game}/{action}", json=body)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def played(client, game: str, seats: int, seed: str, moves: int) -> dict[str, Any]:
    """The state after up to `moves` uniform random moves from a short match's `new`."""
    rng = random.Random(seed)
    short = SHORT if "target_score" in games()[game].shapes.options else {}
    body = {"rules": short, "seats": seats, "seed": seed}
    state = post(client, game, "new", body)["state"]
    for _ in range(moves):
        listed = post(client, game, "legal-moves", {"state": state})["moves"]
        if not listed:
            break
        state = post(client, game, "apply", {"state": state, "move": rng.choice(listed)})["state"]
    return state


@st.composite
def positions(draw) -> tuple[str, tuple[int, str, int]]:
    """A game, and the seats, seed and number of random moves of a position of it (see
    `played`; up to a match's end)."""
    game = draw(st.sampled_from(sorted(games())))
    seats = draw(st.sampled_from(games()[game].catalogue()["seats"]))
    seed = draw(st.text("abcdef0123456789", min_size=1, max_size=8))
    return game, (seats, seed, draw(st.integers(0, 120)))


def leaves(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every scalar of a JSON value and every empty list or object in it, with its path."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    else:
        yield path, value


def replaced(state: dict[str, Any], path: Path, value: Any) -> dict[str, Any]:
    edited = copy.deepcopy(state)
    *parents, last = path
    target: Any = edited
    for key in parents:
        target = target[key]
    target[last] = value
    return edited


def written(game: str, move: dict[str, Any]) -> dict[str, Any]:
    """A listed move as a client writes it: only the fields the contract names for it."""
    named = MOVE_FIELDS.get(game)
    return move if named is None else {key: value for key, value in move.items() if key in named}


def taken(game: str, wrong: Any, value: Any) -> bool:
    """Whether the field holding `value` may take `wrong` as well."""
    return wrong == value or (game not in MOVE_FIELDS and type(wrong) is type(value))


@settings(max_examples=12, deadline=None)
@given(position=positions(), picks=st.randoms(use_true_random=False))
def test_a_field_of_the_wrong_type_is_a_422_naming_it(client, position, picks) -> None:
    game, (seats, seed, moves) = position
    state = played(client, game, seats, seed, moves)
    fields = [(path, value) for path, value in leaves(state) if path[0] != "seed"]
    for path, value in picks.sample(fields, min(40, len(fields))):
        named = "state." + ".".join(map(str, path))
        for wrong in WRONG:
            if taken(game, wrong, value):
                continue
            response = client.post(
                f"/v1/games/{game}/legal-moves", json={"state": replaced(state, path, wrong)}
            )
            assert response.status_code == 422, (named, wrong)
            assert response.content_type == "application/problem+json"
            errors = response.get_json()["errors"]
            # The field itself, a part of it, or (an element of a rule option) the option.
            assert any(
                key == named or key.startswith(f"{named}.") or named.startswith(f"{key}.")
                for key in errors
                if key != "state"
            ), (named, wrong, errors)


@settings(max_examples=12, deadline=None)
@given(position=positions())
def test_every_listed_move_written_plays_as_listed_into_a_state_accepted_back(
    client, position
) -> None:
    game, (seats, seed, moves) = position
    state = played(client, game, seats, seed, moves)
    for move in post(client, game, "legal-moves", {"state": state})["moves"]:
        answer = post(client, game, "apply", {"state": state, "move": move})
        assert post(client, game, "apply", {"state": state, "move": written(game, move)}) == answer
        after = answer["state"]
        post(client, game, "legal-moves", {"state": after})
        post(client, game, "score", {"state": after})
        for seat in range(seats):
            view = post(client, game, "view", {"state": after, "seat": seat})["view"]
            assert "seed" not in view
            if "hands" in after:
                assert view["hand"] == after["hands"][seat]
