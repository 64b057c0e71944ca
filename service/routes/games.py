"""The stateless game endpoints, `/v1/games/<game>/...` for every registered game:
parse -> engine -> write, nothing else. Each game gets its own blueprint, so openapi.yaml
has a path per game taking and answering that game's own shapes."""

import re
from typing import Any

import flask
from werkzeug.routing import BaseConverter

from engine.game import Game, games
from service import requests, stateless
from service.errors import KINDS, Problem
from service.replay import replay as replayed
from service.routes import Blueprint, answer, documented, read_body
from service.routes.hints import add_hint
from service.schemas.derived import title_of
from service.schemas.envelopes import CatalogueResponse, envelopes_of
from service.stateless import PREFIX

catalogue_blp = Blueprint("games", __name__, url_prefix=PREFIX, description="The games")
unknown_blp = flask.Blueprint("unknown-game", __name__, url_prefix=PREFIX)
# The fields of a request body that are objects its route reads in depth itself.
STATE = stateless.CALLS["legal-moves"][1]
STATE_AND_MOVE = stateless.CALLS["apply"][1]


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
        return answer(stateless.listed(game, read_body(state_request, STATE)))

    @blp.route("/apply", methods=["POST"])
    @documented(
        blp.arguments(shapes.apply),
        blp.response(200, shapes.apply_answer),
        blp.doc(operationId=f"apply{title}Move"),
    )
    def apply() -> flask.Response:
        """Play one move. An illegal move is a 422 that says why."""
        return answer(stateless.applied(game, read_body(apply_request, STATE_AND_MOVE)))

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

    @blp.route("/replay", methods=["POST"])
    @blp.doc(operationId=f"replay{title}Match")
    @blp.arguments(shapes.replay)
    @blp.response(200, shapes.replay_answer)
    def replay(body: dict[str, Any]) -> flask.Response:
        """Replay a finished match's record (GET /v1/sessions/{id}/record): the seed is
        checked against the commitment (else a 422 naming `record.seed`), then every move
        is checked and played from `new(rules, seats, seed)` (a move by the wrong seat or an
        illegal one: a 422 naming `record.moves.<i>`). The final state's view for each seat
        is the session's last view for it; the events are the session's."""
        return answer(replayed(game, body["record"]))

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
