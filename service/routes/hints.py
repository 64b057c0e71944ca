"""Hints: the move a computer player would make for the seat to move, and what it weighed."""

import secrets
from typing import Any

import flask

from engine.bots import hint
from engine.game import get_game
from service.errors import invalid
from service.routes import Blueprint
from service.routes.games import SEED_BYTES, answer, read_state
from service.schemas import HintRequest, HintResponse

blp = Blueprint("hints", __name__, url_prefix="/v1/games", description="Computer advice")


@blp.route("/basra/hint", methods=["POST"])
@blp.arguments(HintRequest)
@blp.response(200, HintResponse)
def basra_hint(body: dict[str, Any]) -> flask.Response:
    """The move a computer player advises for the seat to move.

    The bot `level` (default expert) decides from that seat's view only; every legal move
    it weighed comes back with its estimated value. The same state, level and seed give
    the same hint.
    """
    game = get_game("basra")
    state = read_state(game, body["state"])
    if game.to_move(state) is None:
        raise invalid("state.status", "the match is over; there is no move to hint")
    seed = body["seed"] if "seed" in body else secrets.token_hex(SEED_BYTES)
    move, alternatives = hint(game, state, body["level"], seed)
    return answer(
        {
            "move": game.write_move(state, move),
            "alternatives": [
                {"move": game.write_move(state, option), "value": value}
                for option, value in alternatives
            ],
            "level": body["level"],
        }
    )
