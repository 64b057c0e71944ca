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
    check_json(req)
    body = req.get_data(cache=True)
    return parsed(body) if body else core.missing


def plain(coding: str | None) -> bool:
    """Whether a Content-Encoding header (None: none) says the body is sent as it is."""
    return (coding or "").strip().lower() in ("", "identity")


def check_json(req: flask.Request) -> None:
    """A 415 unless the body is JSON sent as it is: a body that is not JSON, or one with a
    Content-Encoding (gzip, ...), which the service does not decode (before, a gzipped body
    was read as is and was a 400 "malformed JSON", as if the JSON inside were wrong)."""
    if not core.is_json(req.mimetype):
        raise UnsupportedBody(req.mimetype)
    coding = req.headers.get("Content-Encoding")
    if not plain(coding):
        raise UnsupportedBody(
            req.mimetype,
            f"the body must be sent as it is, not with Content-Encoding: {coding.strip()}",
        )


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
