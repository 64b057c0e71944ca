"""The HTTP service: `create_app(config)` builds the whole app."""

from collections.abc import Mapping
from typing import Any

import flask
from flask_swagger_ui import get_swaggerui_blueprint
from werkzeug.routing import Map

from engine.game import games as registered_games
from service import stateless
from service.config import load_config
from service.errors import ProblemApi, install_problems
from service.headers import (
    REQUEST_ID,
    cors_origins,
    install_cors,
    install_no_store,
    request_id,
)
from service.json import OrjsonProvider
from service.lean import LeanPath
from service.limits import BoundedBody, RateLimits, RateLimitsDocumented, install_rate_limits
from service.logs import install_logging
from service.metrics import install_metrics
from service.replay import replay_paths
from service.routes import games, health, page, problems, sessions
from service.schemas import document, names_kept, spec_yaml

DOCS_PATH = "/docs"


class Paths(Map):
    """Werkzeug's URL map without merging slashes: a path with an empty segment is no path of
    the API (a 404), not a 308 HTML redirect to another one (`/v1/sessions//events` to the
    session named `events`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "merge_slashes": False})


class App(flask.Flask):
    """Flask, minus its check of every view and hook for a coroutine on every request
    (inspect's, a few percent of a stateless answer): the service has none, and
    tests/service/test_app.py keeps it so."""

    url_map_class = Paths

    def ensure_sync(self, func: Any) -> Any:
        return func


def create_app(config: Mapping[str, Any] | None = None) -> flask.Flask:
    """The whole app. With no configuration it needs no Redis; {"REDIS_URL": ...} selects one."""
    settings = load_config(config)
    app = App(__name__)
    app.config.update(settings)
    app.config.update(
        MAX_CONTENT_LENGTH=settings["MAX_BODY_BYTES"],
        API_TITLE="Card games",
        API_VERSION="1",
        OPENAPI_VERSION="3.1.0",
        API_SPEC_OPTIONS={
            "info": {
                "description": f"Card games ({', '.join(registered_games())}): stateless "
                "play, hints and hosted sessions. Play them in the browser at /play."
            },
            # Relative: the service wherever this document was fetched from. Generated
            # clients take their base URL when they are built (docs/api.md).
            "servers": [{"url": "/", "description": "the service serving this document"}],
        },
    )
    app.json = OrjsonProvider(app)
    install_logging(app)
    if settings["METRICS"]:
        # First, so its clock starts before any other hook can answer the request.
        install_metrics(app)
    install_request_id(app)
    install_record_bounds(app)
    install_cors(app, settings)
    install_no_store(app)
    install_rate_limits(app)
    api = ProblemApi(app, spec_kwargs={"extra_plugins": [RateLimitsDocumented()]})
    document(api.spec)
    install_problems(app)
    register_blueprints(app, api)
    names_kept(api.spec)
    install_docs(app, api)
    install_front(app)
    return app


def install_front(app: flask.Flask) -> None:
    """What runs in front of Flask, outermost first: the body's bound, the rate limits (a
    refused request goes straight to Flask, which answers its 429), and the lean path that
    answers clean stateless calls and hosted moves itself (service/lean.py)."""
    config = app.config
    flask_app = app.wsgi_app
    lean = LeanPath(
        flask_app,
        [*stateless.lean_routes(), *sessions.lean_routes(app)],
        max_body=config["MAX_BODY_BYTES"],
        metrics=bool(config["METRICS"]),
        cors=cors_origins(config["CORS_ORIGINS"]) is not None,
    )
    app.wsgi_app = BoundedBody(  # type: ignore[method-assign]
        RateLimits.of(lean, flask_app, config),
        config["MAX_BODY_BYTES"],
        refuse=flask_app,
        seconds=float(config["BODY_TIMEOUT_SECONDS"]),
        send_seconds=float(config["SEND_TIMEOUT_SECONDS"]),
        bounds=dict.fromkeys(replay_paths(), config["MAX_RECORD_BYTES"]),
    )


def install_record_bounds(app: flask.Flask) -> None:
    """Flask takes a replayed record up to MAX_RECORD_BYTES, as BoundedBody does: a whole
    match's record is larger than MAX_BODY_BYTES."""
    paths = replay_paths()

    @app.before_request
    def take_records() -> None:
        if flask.request.path in paths:
            flask.request.max_content_length = app.config["MAX_RECORD_BYTES"]


def register_blueprints(app: flask.Flask, api: ProblemApi) -> None:
    """The one place where routes join the app."""
    for blueprint in games.blueprints():
        api.register_blueprint(blueprint)
    app.url_map.converters["unknown_game"] = games.UnknownGameConverter
    app.register_blueprint(games.unknown_blp)
    api.register_blueprint(health.blp)
    api.register_blueprint(problems.blp)
    sessions.install(app, api)
    app.register_blueprint(page.blp)


def install_request_id(app: flask.Flask) -> None:
    """Every answer carries X-Request-ID: the caller's, or a fresh one (gunicorn logs it)."""

    @app.before_request
    def take_request_id() -> None:
        flask.g.request_id = request_id(flask.request.environ)

    @app.after_request
    def echo_request_id(response: flask.Response) -> flask.Response:
        # An earlier before_request hook may have answered before the id was taken.
        response.headers[REQUEST_ID] = flask.g.get("request_id") or request_id({})
        return response


def install_docs(app: flask.Flask, api: ProblemApi) -> None:
    """The OpenAPI document and an interactive page whose assets ship with the package."""

    @app.get("/openapi.yaml")
    def openapi_yaml() -> flask.Response:
        return flask.Response(spec_yaml(api.spec), mimetype="application/yaml")

    app.register_blueprint(get_swaggerui_blueprint(DOCS_PATH, "/openapi.yaml"))

    @app.get("/")
    def home() -> flask.Response:
        """People who open the bare address land on the interactive API page."""
        return flask.redirect(f"{DOCS_PATH}/")

    @app.get(DOCS_PATH)
    def docs_without_slash() -> flask.Response:
        """The page's address without its slash: a relative redirect to it. Werkzeug's own
        (a 308 for a rule ending in a slash) wrote an absolute URL on the request's Host
        header, which the client chooses: a permanent, cacheable redirect to any host."""
        return flask.redirect(f"{DOCS_PATH}/")
