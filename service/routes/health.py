"""Liveness and readiness for orchestrators."""

import flask
import redis
from marshmallow import Schema, fields

from service.errors import Problem
from service.routes import Blueprint

blp = Blueprint("health", __name__, description="Health")


class StatusResponse(Schema):
    status = fields.String(required=True, metadata={"examples": ["ok"]})


@blp.route("/livez")
@blp.response(200, StatusResponse)
def livez() -> dict[str, str]:
    """The process answers."""
    return {"status": "ok"}


@blp.route("/readyz")
@blp.response(200, StatusResponse)
@blp.alt_response(503, response="SERVICE_UNAVAILABLE")
def readyz() -> dict[str, str]:
    """Ready to serve: when Redis is configured, it answers a ping."""
    client = ready_client(flask.current_app)
    if client is not None:
        try:
            client.ping()
        except redis.RedisError as error:
            raise Problem(503, f"redis is not reachable: {type(error).__name__}") from error
    return {"status": "ok"}


def ready_client(app: flask.Flask) -> redis.Redis | None:
    """One client per app, with a short timeout so a dead Redis fails fast."""
    url = app.config["REDIS_URL"]
    if not url:
        return None
    if "ready_redis" not in app.extensions:
        timeout = app.config["READY_TIMEOUT_SECONDS"]
        app.extensions["ready_redis"] = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
    return app.extensions["ready_redis"]
