"""HTTP routes; every blueprint reads JSON bodies with orjson (service/json.py)."""

from collections.abc import Callable, Collection
from typing import Any

import flask
import flask_smorest
from marshmallow import Schema, ValidationError
from webargs import core

from service.errors import Unprocessable, json_paths
from service.json import OrjsonParser, dumps, json_body
from service.stateless import clean


class Blueprint(flask_smorest.Blueprint):
    """flask-smorest's Blueprint reading JSON bodies with orjson (400/415 as problems)."""

    ARGUMENTS_PARSER = OrjsonParser()


def answer(body: Any, status: int = 200) -> flask.Response:
    """The body written once with orjson (the schemas document it; the game wrote it)."""
    return flask.Response(dumps(body), status=status, mimetype="application/json")


def documented(*decorators: Callable[[Callable], Callable]) -> Callable[[Callable], Callable]:
    """The view documented by flask-smorest's `decorators` (`blp.arguments(...)`,
    `blp.response(...)`) exactly as if they wrapped it, but served without their wrappers:
    the view reads its body with `read_body` and writes its answer with `answer`, so no
    body is parsed or dumped twice and openapi.yaml still says what the schemas say."""

    def document(view: Callable) -> Callable:
        wrapped = view
        for decorator in reversed(decorators):
            wrapped = decorator(wrapped)
        view._apidoc = wrapped._apidoc  # type: ignore[attr-defined]
        return view

    return document


def read_body(envelope: Schema, objects: Collection[str] = ()) -> dict[str, Any]:
    """The request's JSON body, as `envelope` (the schema documenting it) reads it.

    A body that holds exactly the fields `objects`, each a JSON object, is handed on as it
    is, without a marshmallow load: the envelope checks no more of such a field than that it
    is an object, and the route reads each one in depth with its own reader (the game's state
    reader, the move's declared shape and the game's move reader), which name the bad field. Any
    other body is loaded by the envelope, so its 422 names the field as always."""
    body = json_body(flask.request)
    if objects and clean(body, objects):
        return body
    try:
        return envelope.load({} if body is core.missing else body)
    except ValidationError as error:
        raise Unprocessable(json_paths(error.messages)) from error
