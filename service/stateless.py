"""The stateless calls a client makes on every turn, `legal-moves` and `apply`: what each
answers given its parsed body (one function a call, which its Flask route and the lean path
both call), and their lean routes (service/lean.py). A body that is not a JSON object
holding exactly the call's objects, or whose answer is a problem, is Flask's route's to
answer: these calls change nothing, so it simply answers them again.
"""

from collections.abc import Callable, Collection, Mapping
from typing import Any

import orjson

from engine.game import Game, games
from service import requests
from service.json import dumps
from service.lean import Call, LeanRoute

PREFIX = "/v1/games"
Answer = Callable[[Game, dict[str, Any]], dict[str, Any]]


def listed(game: Game, body: dict[str, Any]) -> dict[str, Any]:
    """legal-moves: every legal move of the seat to move, as the game writes them."""
    state = requests.read_state(game, body["state"])
    return {"moves": [game.write_move(state, move) for move in game.legal_moves(state)]}


def applied(game: Game, body: dict[str, Any]) -> dict[str, Any]:
    """apply: the state after the move and its events."""
    requests.check_move(game, body["move"])  # a malformed move is named before the state
    state = requests.read_state(game, body["state"])
    state, events = game.apply(state, requests.legal_move(game, state, body["move"]))
    return {"state": game.write(state), "events": events}


# Each call: its answer, and the fields of its body, each a JSON object its answer reads in
# depth itself (the game's state reader, the move's declared shape, the game's move reader).
CALLS: dict[str, tuple[Answer, tuple[str, ...]]] = {
    "legal-moves": (listed, ("state",)),
    "apply": (applied, ("state", "move")),
}


def clean(body: object, objects: Collection[str]) -> bool:
    """Whether `body` is a JSON object holding exactly the fields `objects`, each an object."""
    return (
        type(body) is dict
        and len(body) == len(objects)
        and all(type(body.get(name)) is dict for name in objects)
    )


def lean_routes() -> list[LeanRoute]:
    """Every registered game's clean legal-moves and apply calls, for the lean path."""

    def lean(game: Game, answer: Answer, objects: tuple[str, ...]) -> Call:
        def call(environ: dict[str, Any], arguments: Mapping[str, str], data: bytes) -> bytes:
            body = orjson.loads(data)
            if not clean(body, objects):
                raise ValueError("not a clean call")  # Flask's route names what is wrong
            return dumps(answer(game, body))

        return call

    return [
        LeanRoute(f"{PREFIX}/{name}/{call}", lean(game, *CALLS[call]))
        for name, game in games().items()
        for call in CALLS
    ]
