"""Hints: the move a computer player would make for the seat to move, and what it weighed."""

from typing import Any

import flask

from engine.bots import hint
from engine.bots.search import moves_to_choose
from engine.game import Game
from service import requests
from service.errors import invalid
from service.routes import Blueprint, answer
from service.schemas.derived import title_of
from service.schemas.envelopes import Envelopes


def add_hint(blp: Blueprint, game: Game, shapes: Envelopes) -> None:
    """`POST .../hint` on the game's blueprint."""

    @blp.route("/hint", methods=["POST"])
    @blp.arguments(shapes.hint())
    @blp.response(200, shapes.hint_answer)
    @blp.doc(operationId=f"hint{title_of(game.name)}Move")
    def advise(body: dict[str, Any]) -> flask.Response:
        """The move a computer player advises for the seat to move.

        The bot `level` (default expert) decides from that seat's view only; every legal move
        it weighed comes back with its estimated value (where the moves are too many to list,
        the few the game offers its bots there). The same state, level and seed give the
        same hint.
        """
        state = requests.read_state(game, body["state"])
        if game.to_move(state) is None:
            raise invalid("state.status", "the match is over; there is no move to hint")
        # The moves a bot chooses among: a position whose moves are too many to list is
        # hinted among those the game offers for it, as a hosted bot plays there (a game
        # that offers none: a 422 too-large naming what is too large).
        if not moves_to_choose(game, state):
            # A valid state: a Basra round played out, its sweep and points not yet banked.
            raise invalid("state", "the seat to move has no legal move; there is no move to hint")
        move, alternatives = hint(game, state, body["level"], requests.seed(body))
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
