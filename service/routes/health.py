"""Liveness and readiness for orchestrators."""

import flask
from marshmallow import Schema, fields

from service.hosted.problems import unavailable
from service.routes import Blueprint

blp = Blueprint("health", __name__, description="Health")


class StatusResponse(Schema):
    status = fields.String(required=True, metadata={"examples": ["ok"]})


@blp.route("/livez")
@blp.response(200, StatusResponse)
@blp.doc(operationId="getLiveness")
def livez() -> dict[str, str]:
    """The process answers."""
    return {"status": "ok"}


@blp.route("/readyz")
@blp.response(200, StatusResponse)
@blp.alt_response(503, response="SERVICE_UNAVAILABLE")
@blp.doc(operationId="getReadiness")
def readyz() -> dict[str, str]:
    """Ready to serve: the session store answers (Redis, when one is configured)."""
    if not flask.current_app.extensions["sessions"].store.ready():
        raise unavailable("the session store is not reachable")
    return {"status": "ok"}
