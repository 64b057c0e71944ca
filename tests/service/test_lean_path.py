"""The lean path (service/lean.py) answers clean legal-moves, apply and hosted moves without a
Flask request, exactly as their Flask routes do: the same bytes, status and headers over
whole random matches of every game; everything else reaches Flask and gets its answer."""

import logging
import random

import flask
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.game import games, get_game
from service import create_app
from service.lean import LeanPath
from service.limits import BoundedBody, RateLimits
from service.logs import RequestContext
from service.store import StoreUnavailable

REQUEST_ID = {"X-Request-ID": "lean-1"}
# Client seeds, so that a hosted session of each app deals the same match.
SEEDED = {"REDIS_URL": None, "CLIENT_SEEDS": True}


@pytest.fixture(scope="module")
def lean():
    """The shipped app (rate limits off in these tests): the lean path in front of Flask."""
    app = create_app(SEEDED)
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
    app = create_app(SEEDED)
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
    mine = post(lean_app, path, body, **headers)
    same_answer(mine, post(flask_app, path, body, **headers))
    return mine


def same_answer(mine, theirs) -> None:
    """Two answers equal: status, headers and bytes."""
    assert mine.status_code == theirs.status_code
    assert sorted(mine.headers.items()) == sorted(theirs.headers.items())
    assert mine.data == theirs.data


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


@pytest.mark.parametrize("length", ["²", "1" * 5000, "٣٠"])
def test_a_content_length_of_other_digits_than_ascii_is_flasks_and_no_500(lean, length):
    """str.isdigit takes these; int refuses the first two and reads the third as 30."""
    seen = flask_requests(lean)
    body = orjson.dumps({"state": get_game("basra").write(get_game("basra").new({}, 2, "x"))})
    answer = lean.test_client().post(
        "/v1/games/basra/legal-moves", data=body, content_type="application/json",
        environ_overrides={"CONTENT_LENGTH": length},
    )  # fmt: skip
    assert 400 <= answer.status_code < 500
    assert seen == ["/v1/games/basra/legal-moves"]


def answered_posts(app: flask.Flask, route: str) -> float:
    """How many POSTs to `route` (its rule) the metrics have counted as answered 200."""
    text = app.test_client().get("/metrics").text
    wanted = ('cards_http_request_duration_seconds_count{method="POST",'
              f'route="{route}",status="200"}}')  # fmt: skip
    return next((float(line.split()[-1]) for line in text.splitlines()
                 if line.startswith(wanted)), 0.0)  # fmt: skip


def test_lean_answers_are_counted_in_the_metrics(lean):
    before = answered_posts(lean, "/v1/games/basra/legal-moves")
    state = get_game("basra").write(get_game("basra").new({}, 2, "counted"))
    for _ in range(3):
        assert post(lean, "/v1/games/basra/legal-moves",
                    orjson.dumps({"state": state})).status_code == 200  # fmt: skip
    assert answered_posts(lean, "/v1/games/basra/legal-moves") == before + 3


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


SESSIONS = "/v1/sessions"


class Seated:
    """The same seeded all-human session in one app: its id, each seat's token, and the
    match as the engine plays it beside."""

    def __init__(self, app: flask.Flask, name: str, seed: str) -> None:
        self.app, self.game = app, get_game(name)
        preset = sorted(self.game.catalogue()["presets"])[0]
        seats = min(self.game.catalogue()["seats"])
        created = post(app, SESSIONS, orjson.dumps({
            "game": name, "rules": {"preset": preset}, "seed": seed,
            "seats": [{"type": "human"}] * seats,
        }))  # fmt: skip
        assert created.status_code == 201, created.json
        self.id = created.json["id"]
        self.tokens = [seat["token"] for seat in created.json["seats"]]
        self.state = self.game.new({"preset": preset}, seats, seed)
        self.version = 0

    def move(self, body: bytes, seat: int | None = None, **headers: str):
        mover = self.game.to_move(self.state) if seat is None else seat
        return post(self.app, f"{SESSIONS}/{self.id}/moves", body,
                    Authorization=f"Bearer {self.tokens[mover]}", **headers)  # fmt: skip

    def body(self, move: object, version: int | None = None) -> bytes:
        return orjson.dumps({"move": move, "version": self.version if version is None
                             else version})  # fmt: skip

    def played(self, move: object) -> None:
        self.state, _ = self.game.apply(self.state, self.game.read_move(self.state, move))
        self.version += 1


@settings(max_examples=12, deadline=None)
@given(name=st.sampled_from(sorted(games())), seed=st.integers(0, 10**6))
def test_hosted_moves_answer_the_same_without_flask(lean, flask_only, name, seed):
    """A seeded match played move by move in a session of each app: the lean path's answers
    are Flask's, byte for byte and header for header, and Flask never saw one of them."""
    rng = random.Random(seed)
    mine = Seated(lean, name, f"hosted-{seed}")
    theirs = Seated(flask_only, name, f"hosted-{seed}")
    seen = flask_requests(lean)
    for _ in range(40):
        moves = mine.game.legal_moves(mine.state)
        if not moves:
            break
        move = mine.game.write_move(mine.state, rng.choice(moves))
        answer = mine.move(mine.body(move))
        same_answer(answer, theirs.move(theirs.body(move)))
        assert answer.status_code == 200, answer.json
        assert answer.headers["Cache-Control"] == "no-store"
        mine.played(move)
        theirs.played(move)
    assert seen == []


def test_every_refused_hosted_move_is_flasks_problem_and_changes_nothing(lean, flask_only):
    """Each of the contract's refusals, in its order of checks, answered alike by both apps
    (through the lean path, Flask raises what the lean call raised); nothing moved."""
    mine, theirs = Seated(lean, "basra", "refused"), Seated(flask_only, "basra", "refused")
    mover = mine.game.to_move(mine.state)
    move = mine.game.write_move(mine.state, mine.game.legal_moves(mine.state)[0])
    not_in_hand = next(card for card in ("AS", "2S", "3S", "4S", "5S")
                       if card not in mine.game.view(mine.state, mover)["hand"])  # fmt: skip
    refusals = [
        (mine.body(move), {"Authorization": "Bearer nobody"}, None, 401),
        (mine.body(move, version=3), {}, None, 409),
        (mine.body(move), {}, 1 - mover, 403),
        (mine.body({"card": not_in_hand}), {}, None, 422),
        (orjson.dumps({"move": move, "version": 0, "extra": 1}), {}, None, 422),
        (orjson.dumps({"move": [], "version": 0}), {}, None, 422),
        (b"{not json", {}, None, 400),
    ]
    seen = flask_requests(lean)
    for body, headers, seat, status in refusals:
        answers = []
        for seated in (mine, theirs):
            sent = dict(headers)
            if "Authorization" not in sent:
                token = seated.tokens[mover if seat is None else seat]
                sent["Authorization"] = f"Bearer {token}"
            answers.append(post(seated.app, f"{SESSIONS}/{seated.id}/moves", body, **sent))
        same_answer(*answers)
        assert answers[0].status_code == status, answers[0].json
        assert answers[0].headers["Content-Type"] == "application/problem+json"
    assert seen == [f"{SESSIONS}/{mine.id}/moves"] * len(refusals)
    assert lean.test_client().get(
        f"{SESSIONS}/{mine.id}", headers={"Authorization": f"Bearer {mine.tokens[0]}"}
    ).json["version"] == 0  # fmt: skip


def test_a_retried_hosted_move_with_its_key_gets_the_first_answer(lean):
    """Through the lean path as through Flask: a retry with the key replays the first
    answer, and the key with another move is a 422."""
    mine = Seated(lean, "basra", "retried")
    first_move, other_move = (mine.game.write_move(mine.state, move)
                              for move in mine.game.legal_moves(mine.state)[:2])  # fmt: skip
    key = {"Idempotency-Key": "k-1"}
    first = mine.move(mine.body(first_move), **key)
    again = mine.move(mine.body(first_move), **key)
    assert first.status_code == again.status_code == 200
    assert first.data == again.data and first.json["version"] == 1
    reused = mine.move(mine.body(other_move), **key)
    assert reused.status_code == 422, reused.json


def test_a_hosted_move_failing_after_its_commit_is_not_played_twice(monkeypatch):
    """What a lean move raised is what Flask answers: a store that applied the move and
    then failed answers 503, and the move is not run again by Flask (a second run would
    be a 409, or with a bot to answer, a second move)."""
    app = create_app(SEEDED)
    try:
        commits = app.extensions["sessions"].commits
        real = commits.commit
        calls = []

        def committed_then_lost(*args, **kwargs):
            calls.append(real(*args, **kwargs))
            raise StoreUnavailable("the answer was lost")

        mine = Seated(app, "basra", "lost")
        move = mine.game.write_move(mine.state, mine.game.legal_moves(mine.state)[0])
        monkeypatch.setattr(commits, "commit", committed_then_lost)
        answer = mine.move(mine.body(move))
        assert answer.status_code == 503
        assert answer.headers["X-Request-ID"] == "lean-1"
        assert len(calls) == 1
        monkeypatch.setattr(commits, "commit", real)
        read = app.test_client().get(f"{SESSIONS}/{mine.id}",
                                     headers={"Authorization": f"Bearer {mine.tokens[0]}"})
        assert read.json["version"] == 1
    finally:
        app.extensions["sessions"].close()


def lean_move_logged(lean, level: int, seed: str) -> tuple[list, str]:
    """The records the service's loggers write at `level` while a lean move (not the
    match's last) is answered, with its request's context; and the session's id."""
    records: list = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    handler.addFilter(RequestContext())
    logger = logging.getLogger("service")
    mine = Seated(lean, "basra", seed)
    move = mine.game.write_move(mine.state, mine.game.legal_moves(mine.state)[0])
    # setLevel, not the attribute: it clears what the loggers below remember they let through.
    previous = logger.level
    logger.setLevel(level)
    logger.addHandler(handler)
    try:
        seen = flask_requests(lean)
        assert mine.move(mine.body(move), **{"X-Request-ID": "lean-log"}).status_code == 200
        assert seen == []
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    return records, mine.id


def test_a_lean_moves_log_lines_name_its_request(lean):
    """A line logged inside a lean move (the commit's, at DEBUG) carries the request id,
    route and session id, as it would inside Flask."""
    records, session_id = lean_move_logged(lean, logging.DEBUG, "logged")
    moved = [record for record in records if record.getMessage() == "moves applied"]
    assert [(r.request_id, r.route, r.method, r.session_id) for r in moved] == [
        ("lean-log", f"{SESSIONS}/<session_id>/moves", "POST", session_id)
    ]


def test_a_move_that_does_not_end_the_match_writes_no_line_at_info(lean):
    """At INFO, the default level, a move has its access line and no line of its own: a
    line every move cost a hosted move a sixth of its CPU."""
    records, _ = lean_move_logged(lean, logging.INFO, "quiet")
    assert records == []


def test_lean_hosted_moves_are_counted_in_the_metrics(lean):
    route = f"{SESSIONS}/<session_id>/moves"
    before = answered_posts(lean, route)
    mine = Seated(lean, "basra", "counted")
    move = mine.game.write_move(mine.state, mine.game.legal_moves(mine.state)[0])
    assert mine.move(mine.body(move)).status_code == 200
    assert answered_posts(lean, route) == before + 1
