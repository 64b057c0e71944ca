"""The stateless game endpoints, `/v1/games/<game>/...` for every registered game:
parse -> engine -> write, nothing else. Each game gets its own blueprint, so openapi.yaml
has a path per game taking and answering that game's own shapes."""

import re
from typing import Any

import flask
from werkzeug.routing import BaseConverter

from engine.game import Game, games
from service import requests
from service.errors import KINDS, Problem
from service.routes import Blueprint, answer, documented, read_body
from service.routes.hints import add_hint
from service.schemas.derived import title_of
from service.schemas.envelopes import CatalogueResponse, envelopes_of

PREFIX = "/v1/games"
catalogue_blp = Blueprint("games", __name__, url_prefix=PREFIX, description="The games")
unknown_blp = flask.Blueprint("unknown-game", __name__, url_prefix=PREFIX)
# The fields of a request body that are objects its route reads in depth itself.
STATE = ("state",)
STATE_AND_MOVE = ("state", "move")


@catalogue_blp.route("")
@catalogue_blp.response(200, CatalogueResponse)
@catalogue_blp.doc(operationId="listGames")
def catalogue() -> flask.Response:
    """The games, their presets and every rule option with its default."""
    return answer({"games": [game.catalogue() for game in games().values()]})


def game_blueprint(game: Game) -> Blueprint:
    """The stateless endpoints of one game."""
    shapes = envelopes_of(game.name)
    blp = Blueprint(
        game.name,
        __name__,
        url_prefix=f"{PREFIX}/{game.name}",
        description=f"{title_of(game.name)}: stateless play (the caller holds the whole state) "
        "and hints.",
    )

    title = title_of(game.name)

    @blp.route("/new", methods=["POST"])
    @blp.arguments(shapes.new(), required=False)
    @blp.response(200, shapes.state_answer)
    @blp.doc(operationId=f"new{title}Match")
    def new(body: dict[str, Any]) -> flask.Response:
        """A fresh game; the same seed, rules and seats give the same state."""
        seats = body.get("seats", requests.default_seats(game))
        state = requests.new_state(game, body.get("rules"), seats, requests.seed(body))
        return answer({"state": game.write(state)})

    state_request, apply_request, view_request = shapes.state(), shapes.apply(), shapes.view()

    @blp.route("/legal-moves", methods=["POST"])
    @documented(
        blp.arguments(shapes.state),
        blp.response(200, shapes.legal_moves_answer),
        blp.doc(operationId=f"list{title}LegalMoves"),
    )
    def legal_moves() -> flask.Response:
        """Every legal move of the seat to move, no duplicates; [] once the match is over."""
        state = requests.read_state(game, read_body(state_request, STATE)["state"])
        return answer({"moves": [game.write_move(state, move) for move in game.legal_moves(state)]})

    @blp.route("/apply", methods=["POST"])
    @documented(
        blp.arguments(shapes.apply),
        blp.response(200, shapes.apply_answer),
        blp.doc(operationId=f"apply{title}Move"),
    )
    def apply() -> flask.Response:
        """Play one move. An illegal move is a 422 that says why."""
        body = read_body(apply_request, STATE_AND_MOVE)
        requests.check_move(game, body["move"])  # a malformed move is named before the state
        state = requests.read_state(game, body["state"])
        state, events = game.apply(state, requests.legal_move(game, state, body["move"]))
        return answer({"state": game.write(state), "events": events})

    @blp.route("/score", methods=["POST"])
    @documented(
        blp.arguments(shapes.state),
        blp.response(200, shapes.score_answer),
        blp.doc(operationId=f"score{title}"),
    )
    def score() -> flask.Response:
        """Each side's breakdown of the round or deal as it stands."""
        return answer(
            {
                "sides": game.score(
                    requests.read_state(game, read_body(state_request, STATE)["state"])
                )
            }
        )

    @blp.route("/view", methods=["POST"])
    @documented(
        blp.arguments(shapes.view),
        blp.response(200, shapes.view_answer),
        blp.doc(operationId=f"view{title}"),
    )
    def view() -> flask.Response:
        """What one seat may see: its own hand, only counts of the hidden cards."""
        body = read_body(view_request)
        state = requests.read_state(game, body["state"])
        return answer({"view": game.view(state, requests.check_seat(game, state, body["seat"]))})

    add_hint(blp, game, shapes)
    return blp


def blueprints() -> list[Blueprint]:
    """The catalogue, then one blueprint per registered game."""
    return [catalogue_blp, *(game_blueprint(game) for game in games().values())]


class UnknownGameConverter(BaseConverter):
    """A path segment that is not the name of a registered game."""

    def __init__(self, url_map: Any) -> None:
        super().__init__(url_map)
        known = "|".join(map(re.escape, games()))
        self.regex = f"(?!(?:{known})$)[^/]+"


@unknown_blp.route(
    "/<unknown_game:name>/<path:action>", methods=["GET", "POST", "PUT", "PATCH", "DELETE"]
)
def unknown_game(name: str, action: str) -> flask.Response:
    """Not a registered game: a 404 that lists the games there are."""
    raise Problem.of(
        KINDS["unknown-game"], f"there is no game '{name}'; the games are: {', '.join(games())}"
    )
