"""JSON in and out with orjson: Flask's JSON provider and webargs' body parser."""

import json
from typing import Any

import flask
import orjson
from flask.json.provider import JSONProvider
from webargs import core
from webargs.flaskparser import FlaskParser

from service.errors import BadRequestBody, UnsupportedBody


def dumps(data: Any) -> bytes:
    """orjson, or the standard library for the rare integer beyond 64 bits that a
    crafted state can add up to (orjson refuses those, and a 500 is never an answer)."""
    try:
        return orjson.dumps(data)
    except TypeError:
        return json.dumps(data, separators=(",", ":")).encode()


class OrjsonProvider(JSONProvider):
    """Flask's `jsonify` and `request.get_json` through orjson."""

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        return dumps(obj).decode()

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return orjson.loads(s)

    def response(self, *args: Any, **kwargs: Any) -> flask.Response:
        data = self._prepare_response_obj(args, kwargs)
        return self._app.response_class(dumps(data), mimetype="application/json")


def has_body(request: flask.Request) -> bool:
    return bool(request.content_length) or request.headers.get("Transfer-Encoding") is not None


def json_body(req: flask.Request) -> Any:
    """The request's JSON body through orjson, which rejects NaN and bounds nesting depth;
    `core.missing` when there is no body. A body that is not JSON is a 415, one that does
    not parse a 400."""
    if not has_body(req):
        return core.missing
    if not core.is_json(req.mimetype):
        raise UnsupportedBody(req.mimetype)
    body = req.get_data(cache=True)
    return parsed(body) if body else core.missing


def parsed(body: bytes) -> Any:
    """A request's JSON body; a 400 when it does not parse."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise BadRequestBody(f"malformed JSON body: {error}") from error


class OrjsonParser(FlaskParser):
    """webargs' body parser reading bodies as `json_body` does."""

    def load_json(self, req: flask.Request, schema: Any) -> Any:
        return json_body(req)
