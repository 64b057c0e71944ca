"""The stateless calls a client makes on every turn, `legal-moves` and `apply`: what each
answers given its parsed body (one function a call, which its Flask route and the lean path
both call), and the lean path itself.

The lean path is plain WSGI in front of Flask. Serving a request through Flask (its request
and application contexts, routing, hooks, signals and response objects) costs more than the
engine's own work on a whole state, so a call that reads cleanly is answered here, without a
Flask request: the very answer, status and headers its Flask route gives. Anything else is
handed on to Flask untouched, and the Flask route of the same path answers it: another
path or method, a body that is not a JSON object holding exactly the call's objects, any
4xx, and a browser's cross-origin call while CORS is on. So every error is written by one
path and openapi.yaml documents the one route; tests/service/test_lean_path.py holds the
two answers equal. The rate limits (service/limits.py) count every request before it gets
here.
"""

import io
import time
from collections.abc import Callable, Collection, Iterable
from typing import Any

import orjson

from engine.game import Game, games
from service import requests
from service.headers import NO_STORE, REQUEST_ID, request_id
from service.json import dumps
from service.metrics import observe_request

PREFIX = "/v1/games"
WSGIApp = Callable[[dict[str, Any], Callable], Iterable[bytes]]
Answer = Callable[[Game, dict[str, Any]], dict[str, Any]]
JSON = "application/json"


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


class LeanPath:
    """WSGI middleware answering the clean `legal-moves` and `apply` calls of every
    registered game without Flask, and handing everything else on to `app`."""

    def __init__(self, app: WSGIApp, max_body: int, metrics: bool, cors: bool) -> None:
        self.app = app
        self.max_body = max_body
        self.metrics = metrics
        self.cors = cors
        self.calls = {
            f"{PREFIX}/{name}/{call}": (game, *CALLS[call])
            for name, game in games().items()
            for call in CALLS
        }

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        started = time.perf_counter()
        path = environ.get("PATH_INFO", "")
        call = self.calls.get(path)
        length = environ.get("CONTENT_LENGTH", "")
        if (
            call is None
            or environ["REQUEST_METHOD"] != "POST"
            or environ.get("CONTENT_TYPE", "").partition(";")[0].strip().lower() != JSON
            or not length.isdigit()
            or not 0 < int(length) <= self.max_body
            or (self.cors and "HTTP_ORIGIN" in environ)
        ):
            return self.app(environ, start_response)
        data = environ["wsgi.input"].read(int(length))
        game, answer, objects = call
        try:
            body = orjson.loads(data)
            if not clean(body, objects):
                raise ValueError("not a clean call")
            written = dumps(answer(game, body))
        except Exception:  # Flask's route answers it, or names its problem
            environ["wsgi.input"] = io.BytesIO(data)
            return self.app(environ, start_response)
        start_response(
            "200 OK",
            [
                ("Content-Type", JSON),
                ("Content-Length", str(len(written))),
                ("Cache-Control", NO_STORE),
                (REQUEST_ID, request_id(environ)),
            ],
        )
        if self.metrics:
            observe_request(path, "POST", 200, started)
        return [written]
