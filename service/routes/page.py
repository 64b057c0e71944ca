"""The play page: static files, shipped in the package, that play a hosted session
against the bots through the public API (no build step, nothing fetched from elsewhere),
and each game's rules one click away."""

import sys
from pathlib import Path

import flask

from engine.game import games

PAGE = Path(__file__).resolve().parents[1] / "static" / "play"
# The rules of the shipped games as played here, beside the code in a checkout
# (docs/<game>.md).
RULES = Path(__file__).resolve().parents[2] / "docs"
# A game's rules in its own package: a new game is that package and nothing else.
OWN_RULES = "rules.md"

blp = flask.Blueprint("play", __name__, static_folder=PAGE, static_url_path="/play")


@blp.get("/play")
def page() -> flask.Response:
    """The page itself; its scripts and style are served beside it under /play/."""
    return flask.send_from_directory(PAGE, "index.html")


def rules_of(game: str) -> Path | None:
    """The Markdown rules of a registered game: `rules.md` in its package, else
    docs/<game>.md; None when there are none."""
    known = games()
    if game not in known:
        return None
    package = Path(sys.modules[type(known[game]).__module__].__file__ or "").parent
    for path in (package / OWN_RULES, RULES / f"{game}.md"):
        if path.is_file():
            return path
    return None


@blp.get("/play/rules/<game>")
def rules(game: str) -> flask.Response:
    """A registered game's rules, as Markdown text a browser shows as it is."""
    path = rules_of(game)
    if path is None:
        flask.abort(404)
    response = flask.send_file(path, mimetype="text/plain")
    response.headers["Content-Type"] = "text/plain; charset=utf-8"
    return response
