"""The play page: static files, shipped in the package, that play a hosted session
against the bots through the public API (no build step, nothing fetched from elsewhere),
and each game's rules (`docs/<game>.md`) one click away."""

from pathlib import Path

import flask

from engine.game import games

PAGE = Path(__file__).resolve().parents[1] / "static" / "play"
# The rules as played here, beside the code in a checkout (docs/<game>.md).
RULES = Path(__file__).resolve().parents[2] / "docs"

blp = flask.Blueprint("play", __name__, static_folder=PAGE, static_url_path="/play")


@blp.get("/play")
def page() -> flask.Response:
    """The page itself; its scripts and style are served beside it under /play/."""
    return flask.send_from_directory(PAGE, "index.html")


@blp.get("/play/rules/<game>")
def rules(game: str) -> flask.Response:
    """A registered game's rules, as Markdown text a browser shows as it is."""
    if game not in games() or not (RULES / f"{game}.md").is_file():
        flask.abort(404)
    response = flask.send_from_directory(RULES, f"{game}.md", mimetype="text/plain")
    response.headers["Content-Type"] = "text/plain; charset=utf-8"
    return response
