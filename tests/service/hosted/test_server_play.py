"""The server's own play is bounded (issue: one schema-valid request took every worker
down): rules under which a match cannot end are refused, and bots, timeouts and absent seats
are played a bounded step at a time, the rest resumed in the background through the same
compare-and-set, until the match ends by rule. On both stores, in process under a clock the
test moves, and on real gunicorn while /livez and a player are probed every 100 ms."""

import itertools
import threading
import time

import pytest
import requests

from service.errors import Unprocessable
from service.hosted import commit
from service.hosted.commit import SERVER_MOVES_PER_STEP
from service.hosted.records import load
from service.hosted.sessions import Sessions
from tests.gunicorn_server import gunicorn
from tests.service.hosted.core_client import bearer

# The request: schema-valid, and no side could ever score.
UNWINNABLE = {
    "game": "basra",
    "rules": {"preset": "levantine", "seats_allowed": [2], "forced_capture": False,
              "basra_points": 0, "jack_basra_points": 0, "majority_points": 0,
              "card_points": False, "tie_policy": "none", "target_score": 1},
    "seats": [{"type": "human"}, {"type": "bot", "level": "greedy"}],
    "turn_seconds": 1, "absent_after": 1,
}  # fmt: skip
# The longest match the rules still allow: one point a round, the highest target, so only
# the round cap ends it (thousands of server moves once the human is absent).
LONGEST = {**UNWINNABLE, "rules": {**UNWINNABLE["rules"], "majority_points": 1,
                                   "target_score": 1000}, "spectators": 1}  # fmt: skip
# A match that ends within its first round once the human is absent.
SHORT = {**UNWINNABLE, "rules": {"preset": "levantine", "target_score": 1}, "spectators": 1}


def refused(sessions: Sessions, body: dict) -> dict[str, list[str]]:
    with pytest.raises(Unprocessable) as problem:
        sessions.create(body, None)
    return problem.value.errors


def test_the_unwinnable_request_is_refused_naming_the_options(sessions):
    errors = refused(sessions, UNWINNABLE)
    assert list(errors) == ["rules"]
    for option in ("basra_points", "jack_basra_points", "majority_points", "card_points"):
        assert option in errors["rules"][0]


@pytest.mark.parametrize("game", ["basra", "bank"])
def test_a_target_beyond_the_maximum_is_refused(sessions, game):
    body = {"game": game, "rules": {"target_score": 100_000}, "seats": UNWINNABLE["seats"]}
    assert list(refused(sessions, body)) == ["rules.target_score"]


def test_server_play_goes_a_bounded_step_at_a_time_to_the_end_of_the_match(sessions):
    """Once the human is absent every move is the server's: each timer firing commits at
    most SERVER_MOVES_PER_STEP + 1 versions (the timeout and the step), and the match still
    reaches match_over by itself, every version's events in order."""
    created = sessions.create({**LONGEST, "seed": "bounded"}, None)
    session_id, spectator = created["id"], bearer(created["spectators"][0]["token"])
    sessions.clock.now += 1  # the human's turn runs out: a timeout, and absent from now on
    versions = [created["version"]]
    for _ in range(400):
        sessions.timers.fire_due()
        seen = sessions.store.load(session_id)
        versions.append(seen.version)
        if seen.version == versions[-2]:
            break
    steps = [after - before for before, after in itertools.pairwise(versions)]
    assert max(steps) <= SERVER_MOVES_PER_STEP + 1
    assert len([step for step in steps if step]) > 2  # more than one step was needed
    final = sessions.read(session_id, spectator)
    assert final["view"]["status"] == "match_over"
    events = sessions.events(session_id, spectator, 0)
    assert [event["version"] for event in events] == sorted(e["version"] for e in events)
    assert {event["version"] for event in events} == set(range(1, final["version"] + 1))
    assert events[-1]["type"] == "match_end"
    assert sum(event["type"] == "timeout" for event in events) >= 2


def test_a_reader_resumes_server_play_left_over_by_a_step(sessions):
    created = sessions.create({**LONGEST, "seed": "resumed by a reader"}, None)
    session_id, spectator = created["id"], bearer(created["spectators"][0]["token"])
    sessions.clock.now += 1
    sessions.timers.fire_due()
    first = sessions.store.load(session_id).version
    # Nobody scans: the next read finds the rest of the play due and commits one more step.
    seen = sessions.read(session_id, spectator)
    assert first < seen["version"] <= first + SERVER_MOVES_PER_STEP
    assert seen["deadline"] is None and seen["moves"] == []


@pytest.mark.parametrize("level", ["random", "greedy"])
def test_a_move_answer_holds_every_bot_reply_up_to_the_next_human_turn(sessions, level):
    """As the contract has it, also in Bank with four seats, where once the human is out the
    bots play the deal on: every answer ends on the human's turn or on the match's end.
    Matches are played until one answer held more server moves than a step once allowed."""
    import random

    import orjson

    seats = [{"type": "human"}] + [{"type": "bot", "level": level}] * 3
    rng, longest = random.Random(level), 0  # the most server moves one answer held
    for match in range(6):
        body = {"game": "bank", "seats": seats, "seed": f"bots {level} {match}"}
        created = sessions.create(body, None)
        token = bearer(created["seats"][0]["token"])
        answer = sessions.read(created["id"], token)
        for _ in range(300):
            if answer["view"]["status"] == "match_over":
                break
            assert answer["view"]["turn"] == 0 and answer["moves"], answer["view"]["turn"]
            moves = sorted(answer["moves"], key=orjson.dumps)  # the same in any process
            request = {"move": rng.choice(moves), "version": answer["version"]}
            answer = sessions.move(created["id"], token, lambda r=request: r, None)
            longest = max(longest, answer["version"] - request["version"] - 1)
        if longest > 16:
            break
    assert longest > 16  # the bots played a deal on after the human went out


@pytest.fixture(params=["memory", "redis"])
def served(request, tmp_path):
    settings = {"REDIS_URL": request.getfixturevalue("redis_url")} if request.param == "redis" \
        else {"WEB_CONCURRENCY": "1"}  # fmt: skip
    with gunicorn(tmp_path / "gunicorn.log", GUNICORN_WORKER_CLASS="gevent",
                  TIMER_SCAN_SECONDS="0.2", LOG_LEVEL="warning", **settings) as server:  # fmt: skip
        yield server


class Probe:
    """GET /livez every 100 ms in a thread; the slowest answer (an error counts as infinite)."""

    def __init__(self, url: str) -> None:
        self.url, self.times, self.failures = url, [], 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            began = time.monotonic()
            try:
                ok = requests.get(f"{self.url}/livez", timeout=5).status_code == 200
            except requests.RequestException:
                ok = False
            self.times.append(time.monotonic() - began)
            self.failures += not ok
            if self._stop.wait(0.1):
                return

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return max(self.times)


def post(url: str, body: dict) -> requests.Response:
    return requests.post(f"{url}/v1/sessions", json=body, timeout=30)


def test_on_gunicorn_the_longest_match_never_holds_the_worker(served):
    """The issue's request is refused; the longest allowed match, left to the server, keeps
    committing in the background while /livez answers within 2 s throughout and no worker
    times out."""
    refusal = post(served.url, UNWINNABLE)
    assert refusal.status_code == 422 and list(refusal.json()["errors"]) == ["rules"]
    probe = Probe(served.url)
    created = post(served.url, LONGEST).json()
    spectator = {"Authorization": f"Bearer {created['spectators'][0]['token']}"}
    session = f"{served.url}/v1/sessions/{created['id']}"
    seen = []
    for _ in range(30):
        time.sleep(0.2)
        seen.append(requests.get(session, headers=spectator, timeout=5).json()["version"])
    slowest = probe.stop()
    assert probe.failures == 0 and slowest < 2.0, (probe.failures, slowest)
    assert seen[-1] > seen[0] + 2 * SERVER_MOVES_PER_STEP  # it goes on, step after step
    assert "WORKER TIMEOUT" not in served.log.read_text()


def test_on_gunicorn_a_match_left_to_the_server_reaches_match_over(served):
    probe = Probe(served.url)
    created = post(served.url, SHORT).json()
    spectator = {"Authorization": f"Bearer {created['spectators'][0]['token']}"}
    session = f"{served.url}/v1/sessions/{created['id']}"
    for _ in range(300):
        seen = requests.get(session, headers=spectator, timeout=5).json()
        if seen["view"]["status"] == "match_over":
            break
        time.sleep(0.1)
    assert seen["view"]["status"] == "match_over"
    assert probe.stop() < 2.0 and probe.failures == 0
    events = requests.get(f"{session}/events", params={"after": 0}, headers=spectator,
                          timeout=30).json()  # fmt: skip
    assert {event["version"] for event in events} == set(range(1, seen["version"] + 1))


def test_on_gunicorn_expert_bots_do_not_starve_the_worker(served):
    """Sessions whose three expert bots move first, created back to back from four threads:
    /livez on the same worker(s) keeps answering within 2 s."""
    # The bots hold the first seats, so each creation plays three expert decisions.
    experts = {"game": "basra", "seats": [{"type": "bot", "level": "expert"}] * 3
               + [{"type": "human"}]}  # fmt: skip
    probe = Probe(served.url)
    answers = []

    def create_some() -> None:
        answers.extend(post(served.url, experts).status_code for _ in range(3))

    threads = [threading.Thread(target=create_some) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    slowest = probe.stop()
    assert answers == [201] * 12
    assert probe.failures == 0 and slowest < 2.0, slowest


def test_a_reader_that_loses_a_step_of_server_play_to_another_answers_what_it_wrote(
    sessions, clock, monkeypatch
):
    """A long run of server play (an absent seat and a bot, a step of one move here) is
    resumed by the timer scanner while readers read: a reader that found the next step due
    and lost the commit to the scanner computed the step after it, lost again, and after
    five a GET was a 503; it now answers the session as the winning commit left it."""
    monkeypatch.setattr(commit, "SERVER_MOVES_PER_STEP", 1)
    seats = [{"type": "human"}, {"type": "bot", "level": "random"}]
    created = sessions.create(
        {"game": "basra", "rules": {"preset": "levantine"}, "seats": seats, "seed": "race",
         "turn_seconds": 10, "absent_after": 1, "spectators": 1},
        None,
    )  # fmt: skip
    session_id = created["id"]
    watcher = f"Bearer {created['spectators'][0]['token']}"
    clock.now += 10
    sessions.timers.fire_due()  # seat 0 times out: absent, the server plays on step by step
    fire_on = sessions.timers.fire_on
    calls = []

    def raced(record):
        calls.append(record.version)
        fire_on(load(sessions.store, record.id))  # the scanner commits this step first
        return fire_on(record)

    monkeypatch.setattr(sessions.timers, "fire_on", raced)
    seen = sessions.read(session_id, watcher)
    assert len(calls) == 1 and seen["version"] > calls[0]
