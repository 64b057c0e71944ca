"""HTTP routes; every blueprint uses the orjson body parser below."""

from typing import Any

import flask
import flask_smorest

from service.json import OrjsonParser, dumps


class Blueprint(flask_smorest.Blueprint):
    """flask-smorest's Blueprint reading JSON bodies with orjson (400/415 as problems)."""

    ARGUMENTS_PARSER = OrjsonParser()


def answer(body: Any, status: int = 200) -> flask.Response:
    """The body written once with orjson (the schemas document it; the game wrote it)."""
    return flask.Response(dumps(body), status=status, mimetype="application/json")
