"""The play page: a static page, shipped in the package, that plays a hosted session
against the bots through the public API (no build step, nothing fetched from elsewhere)."""

from pathlib import Path

import flask

PAGE = Path(__file__).resolve().parents[1] / "static" / "play"

blp = flask.Blueprint("play", __name__, static_folder=PAGE, static_url_path="/play")


@blp.get("/play")
def page() -> flask.Response:
    """The page itself; its script and style are served beside it under /play/."""
    return flask.send_from_directory(PAGE, "index.html")
