"""The lean path (service/stateless.py) answers clean legal-moves and apply calls without a
Flask request, exactly as their Flask routes do: the same bytes, status and headers over
whole random matches of every game; everything else reaches Flask and gets its answer."""

import random

import flask
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.game import games, get_game
from service import create_app
from service.limits import BoundedBody, RateLimits
from service.stateless import LeanPath

REQUEST_ID = {"X-Request-ID": "lean-1"}


@pytest.fixture(scope="module")
def lean():
    """The shipped app (rate limits off in these tests): the lean path in front of Flask."""
    app = create_app({"REDIS_URL": None})
    yield app
    app.extensions["sessions"].close()


def middlewares(app: flask.Flask) -> list[object]:
    """What runs in front of Flask, outermost first."""
    found, wsgi = [], app.wsgi_app
    while hasattr(wsgi, "app"):
        found.append(wsgi)
        wsgi = wsgi.app
    return found


@pytest.fixture(scope="module")
def flask_only():
    """The same app without the lean path: every call is Flask's."""
    app = create_app({"REDIS_URL": None})
    lean = next(front for front in middlewares(app) if isinstance(front, LeanPath))
    app.wsgi_app = lean.app  # type: ignore[method-assign]
    yield app
    app.extensions["sessions"].close()


def flask_requests(app: flask.Flask) -> list[str]:
    """The paths of the requests Flask itself handles from now on."""
    seen: list[str] = []
    flask.request_started.connect(lambda sender, **_: seen.append(flask.request.path), app,
                                  weak=False)  # fmt: skip
    return seen


def post(app: flask.Flask, path: str, body: bytes, **headers: str):
    return app.test_client().post(
        path, data=body, headers={"Content-Type": "application/json", **REQUEST_ID, **headers}
    )


def same(lean_app: flask.Flask, flask_app: flask.Flask, path: str, body: bytes, **headers: str):
    """Both apps' answers to one call, checked equal (status, headers, bytes)."""
    mine, theirs = post(lean_app, path, body, **headers), post(flask_app, path, body, **headers)
    assert mine.status_code == theirs.status_code
    assert sorted(mine.headers.items()) == sorted(theirs.headers.items())
    assert mine.data == theirs.data
    return mine


def test_the_lean_path_is_behind_the_rate_limits():
    app = create_app({"REDIS_URL": None, "RATE_LIMITS": True})
    try:
        assert [type(front) for front in middlewares(app)] == [BoundedBody, RateLimits, LeanPath]
    finally:
        app.extensions["sessions"].close()


def test_rate_limits_count_lean_calls_and_flask_answers_the_429():
    app = create_app({"REDIS_URL": None, "RATE_LIMITS": True, "RATE_LIMIT_ADDRESS": "5/minute"})
    try:
        state = orjson.dumps({"state": get_game("basra").write(get_game("basra").new({}, 2, "r"))})
        seen = flask_requests(app)
        statuses = [post(app, "/v1/games/basra/legal-moves", state).status_code for _ in range(7)]
        assert statuses == [200] * 5 + [429] * 2
        assert seen == ["/v1/games/basra/legal-moves"] * 2  # only the refusals reached Flask
        refused = post(app, "/v1/games/basra/legal-moves", state)
        assert refused.headers["Content-Type"] == "application/problem+json"
        assert refused.headers["X-Request-ID"] == "lean-1"
        assert refused.headers["Cache-Control"] == "no-store"
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
    finally:
        app.extensions["sessions"].close()


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(games())), seed=st.integers(0, 10**6))
def test_whole_matches_answer_the_same_without_flask(lean, flask_only, name, seed):
    """A random match of each game, every position listed and every move applied through
    both apps: byte for byte the same, and Flask never saw the lean app's calls."""
    game, rng = get_game(name), random.Random(seed)
    state = game.write(game.new({"preset": rng.choice(sorted(game.catalogue()["presets"]))},
                                min(game.catalogue()["seats"]), f"lean-{seed}"))  # fmt: skip
    seen = flask_requests(lean)
    for _ in range(60):
        listed = same(lean, flask_only, f"/v1/games/{name}/legal-moves",
                      orjson.dumps({"state": state}))  # fmt: skip
        assert listed.status_code == 200 and listed.headers["Cache-Control"] == "no-store"
        assert listed.headers["X-Request-ID"] == "lean-1"
        moves = listed.json["moves"]
        if not moves:
            break
        applied = same(lean, flask_only, f"/v1/games/{name}/apply",
                       orjson.dumps({"state": state, "move": rng.choice(moves)}))  # fmt: skip
        assert applied.status_code == 200
        state = applied.json["state"]
    assert seen == []


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"{not json", 400),
        (b"[]", 422),
        (b'{"state": {}}', 422),  # no move
        (b'{"state": {}, "move": {}, "extra": 1}', 422),
        (b'{"state": [], "move": {}}', 422),
        (b'{"state": {"status": "playing"}, "move": {"card": "AS"}}', 422),
    ],
)
def test_what_is_not_a_clean_call_is_flasks_problem(lean, flask_only, body, status):
    seen = flask_requests(lean)
    answer = same(lean, flask_only, "/v1/games/basra/apply", body)
    assert answer.status_code == status
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert seen == ["/v1/games/basra/apply"]


def test_an_illegal_move_is_named_by_flask_as_always(lean, flask_only):
    game = get_game("basra")
    state = game.write(game.new({"preset": "levantine"}, 2, "illegal"))
    not_in_hand = next(card for card in ("AS", "2S", "3S", "4S") if card not in state["hands"][0])
    seen = flask_requests(lean)
    answer = same(lean, flask_only, "/v1/games/basra/apply",
                  orjson.dumps({"state": state, "move": {"card": not_in_hand}}))  # fmt: skip
    assert answer.status_code == 422
    assert seen == ["/v1/games/basra/apply"]


def test_other_content_types_methods_and_calls_reach_flask(lean):
    state = orjson.dumps({"state": get_game("bank").write(get_game("bank").new({}, 2, "x"))})
    seen = flask_requests(lean)
    assert post(lean, "/v1/games/bank/legal-moves", state, **{"Content-Type": "text/plain"}
                ).status_code == 415  # fmt: skip
    assert lean.test_client().get("/v1/games/bank/legal-moves").status_code == 405
    assert post(lean, "/v1/games/bank/score", state).status_code == 200
    assert seen == ["/v1/games/bank/legal-moves"] * 2 + ["/v1/games/bank/score"]


def test_a_body_over_the_limit_is_flasks_413(lean):
    seen = flask_requests(lean)
    big = b'{"state": {"pad": "' + b"x" * lean.config["MAX_BODY_BYTES"] + b'"}}'
    assert post(lean, "/v1/games/basra/legal-moves", big).status_code == 413
    assert seen == ["/v1/games/basra/legal-moves"]


def test_lean_answers_are_counted_in_the_metrics(lean):
    def count() -> float:
        text = lean.test_client().get("/metrics").text
        wanted = ('cards_http_request_duration_seconds_count{method="POST",'
                  'route="/v1/games/basra/legal-moves",status="200"}')  # fmt: skip
        return next((float(line.split()[-1]) for line in text.splitlines()
                     if line.startswith(wanted)), 0.0)  # fmt: skip

    before = count()
    state = get_game("basra").write(get_game("basra").new({}, 2, "counted"))
    for _ in range(3):
        assert post(lean, "/v1/games/basra/legal-moves",
                    orjson.dumps({"state": state})).status_code == 200  # fmt: skip
    assert count() == before + 3


def test_a_cross_origin_call_gets_flask_corss_headers():
    app = create_app({"REDIS_URL": None, "CORS_ORIGINS": "https://play.example"})
    try:
        state = orjson.dumps({"state": get_game("basra").write(get_game("basra").new({}, 2, "o"))})
        seen = flask_requests(app)
        crossed = post(app, "/v1/games/basra/legal-moves", state, Origin="https://play.example")
        assert crossed.headers["Access-Control-Allow-Origin"] == "https://play.example"
        assert seen == ["/v1/games/basra/legal-moves"]
        assert post(app, "/v1/games/basra/legal-moves", state).status_code == 200
        assert seen == ["/v1/games/basra/legal-moves"]  # no Origin: the lean path's
    finally:
        app.extensions["sessions"].close()
