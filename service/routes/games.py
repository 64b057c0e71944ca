"""The stateless game endpoints: parse -> engine -> write, nothing else."""

import secrets
from collections.abc import Mapping
from typing import Any

import flask

from engine.errors import GameError
from engine.game import Game, games, get_game
from service.errors import invalid
from service.json import dumps
from service.routes import Blueprint
from service.schemas import (
    ApplyRequest,
    ApplyResponse,
    CatalogueResponse,
    LegalMovesResponse,
    NewGameRequest,
    ScoreResponse,
    StateRequest,
    StateResponse,
    ViewRequest,
    ViewResponse,
)

blp = Blueprint("games", __name__, url_prefix="/v1/games", description="Stateless play")
# Not part of the API (not in openapi.yaml): registered only when BENCH_ECHO is set.
echo_blp = flask.Blueprint("echo", __name__, url_prefix="/bench")

DEFAULT_RULES = {"preset": "levantine"}
DEFAULT_SEATS = 2
SEED_BYTES = 16


def answer(body: Mapping[str, Any]) -> flask.Response:
    """The body written once with orjson (the schemas document it; the game wrote it)."""
    return flask.Response(dumps(body), mimetype="application/json")


def under(prefix: str, path: str) -> str:
    return path if path == prefix or path.startswith(f"{prefix}.") else f"{prefix}.{path}"


def read_state(game: Game, data: object) -> Any:
    try:
        return game.read(data)
    except GameError as error:
        raise invalid(under("state", error.path), error.reason, error.choices) from error


def read_move(game: Game, state: Any, data: Mapping[str, Any]) -> Any:
    named = {key: data[key] for key in ("card", "capture") if key in data}
    try:
        return game.read_move(state, named)
    except GameError as error:
        # A move's errors are named under "move"; anything else is about the state.
        prefix = "move" if error.path.startswith("move") else "state"
        raise invalid(under(prefix, error.path), error.reason, error.choices) from error


def rules_path(path: str) -> str:
    """Rule errors name an option; `seats` is the request's own field."""
    return path if path == "seats" else under("rules", path)


@blp.route("")
@blp.response(200, CatalogueResponse)
def catalogue() -> flask.Response:
    """The games, their presets and every rule option with its default."""
    return answer({"games": [game.catalogue() for game in games().values()]})


@blp.route("/basra/new", methods=["POST"])
@blp.arguments(NewGameRequest(), required=False)
@blp.response(200, StateResponse)
def new(body: dict[str, Any]) -> flask.Response:
    """A fresh game; the same seed, rules and seats give the same state."""
    game = get_game("basra")
    seed = body["seed"] if "seed" in body else secrets.token_hex(SEED_BYTES)
    try:
        state = game.new(body.get("rules") or DEFAULT_RULES, body.get("seats", DEFAULT_SEATS), seed)
    except GameError as error:
        raise invalid(rules_path(error.path), error.reason, error.choices) from error
    return answer({"state": game.write(state)})


@blp.route("/basra/legal-moves", methods=["POST"])
@blp.arguments(StateRequest())
@blp.response(200, LegalMovesResponse)
def legal_moves(body: dict[str, Any]) -> flask.Response:
    """Every legal move of the seat to move, no duplicates; [] once the match is over."""
    game = get_game("basra")
    state = read_state(game, body["state"])
    return answer({"moves": [game.write_move(state, move) for move in game.legal_moves(state)]})


@blp.route("/basra/apply", methods=["POST"])
@blp.arguments(ApplyRequest())
@blp.response(200, ApplyResponse)
def apply(body: dict[str, Any]) -> flask.Response:
    """Play one move. An illegal move is a 422 that says why."""
    game = get_game("basra")
    state = read_state(game, body["state"])
    state, events = game.apply(state, read_move(game, state, body["move"]))
    return answer({"state": game.write(state), "events": events})


@blp.route("/basra/score", methods=["POST"])
@blp.arguments(StateRequest())
@blp.response(200, ScoreResponse)
def score(body: dict[str, Any]) -> flask.Response:
    """Each side's breakdown of the round as it stands."""
    game = get_game("basra")
    return answer({"sides": game.score(read_state(game, body["state"]))})


@blp.route("/basra/view", methods=["POST"])
@blp.arguments(ViewRequest())
@blp.response(200, ViewResponse)
def view(body: dict[str, Any]) -> flask.Response:
    """What one seat may see: its own hand, counts of the others and of the stock."""
    game = get_game("basra")
    state = read_state(game, body["state"])
    if body["seat"] >= state.seats:
        raise invalid("seat", f"must be a seat below {state.seats}, got {body['seat']}")
    return answer({"view": game.view(state, body["seat"])})


@echo_blp.post("/echo")
@Blueprint.ARGUMENTS_PARSER.use_args(ApplyRequest(partial=("move",)), location="json")
def echo(body: dict[str, Any]) -> flask.Response:
    """The benchmark's floor: the same body parsed the same way, written back."""
    return answer(body)
