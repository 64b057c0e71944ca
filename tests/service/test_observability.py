"""Metrics and JSON logs of real gunicorn with two workers and a real Redis, read after
whole hosted games: the counts add up over both workers, and neither the metrics nor the
log lines hold a token, a session id (metrics) or a card dealt to a hand."""

import json
import os
import re
import threading
import time
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.gunicorn_server import gunicorn
from tests.service.hosted_games import Hosted, check_history, play_out, start

HUMANS = [{"type": "human"}, {"type": "human"}]
WITH_BOT = [{"type": "human"}, {"type": "bot", "level": "greedy"}]
CARD = re.compile(r"\b(?:10|[2-9TJQKA])[CDHS]\b")  # a ten is `TD` (`10D` on input)


def samples(base: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of GET /metrics, keyed by name and sorted labels."""
    answer = requests.get(f"{base}/metrics", timeout=10)
    assert answer.status_code == 200
    assert answer.headers["Content-Type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def waiting_polls(base: str) -> float:
    return value(samples(base), "cards_long_polls_waiting")


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """Two whole games (human v human, human v greedy bot) on gunicorn with 2 workers, a
    long poll seen waiting in the metrics; yields the server, the games and the log path."""
    from tests.redis_server import RedisServer

    directory = tmp_path_factory.mktemp("observed")
    with RedisServer(directory / "redis") as redis_server, gunicorn(
        directory / "gunicorn.log",
        REDIS_URL=redis_server.url,
        WEB_CONCURRENCY="2",
        LONG_POLL_SECONDS="20",
        PROMETHEUS_MULTIPROC_DIR=str(directory / "metrics"),
    ) as server:  # fmt: skip
        games = [
            play_out(start(server.url, HUMANS)),
            play_out(start(server.url, WITH_BOT)),
        ]
        polled = long_poll_seen_waiting(server.url)
        yield server, games, directory, polled


def long_poll_seen_waiting(base: str) -> tuple[float, float]:
    """The waiting-polls gauge while one poll waits, and once a move has answered it."""
    hosted = start(base, WITH_BOT)
    poller = threading.Thread(
        target=lambda: requests.get(
            f"{base}/v1/sessions/{hosted.id}/events",
            params={"after": hosted.version},
            headers=hosted.headers(0),
            timeout=30,
        )
    )
    poller.start()
    waiting = 0.0
    for _ in range(100):
        waiting = waiting_polls(base)
        if waiting:
            break
        time.sleep(0.1)
    play_out(hosted, turns=1)
    poller.join()
    return waiting, waiting_polls(base)


def test_metrics_add_up_over_both_workers(played):
    server, games, directory, _ = played
    # Both workers wrote samples: the sums below are over two processes.
    assert len({path.stem.rsplit("_", 1)[1] for path in (directory / "metrics").glob("*.db")}) >= 2
    found = samples(server.url)
    human_moves = sum(len(game.seen.acknowledged) for game in games)
    bot_moves = games[1].version - len(games[1].seen.acknowledged)
    assert value(found, "cards_sessions_created_total", game="basra") == 3
    assert value(found, "cards_moves_applied_total", game="basra", player="human", level="") == (
        human_moves + 1
    )
    assert (
        value(found, "cards_moves_applied_total", game="basra", player="bot", level="greedy")
        >= bot_moves
    )
    moves_route = "/v1/sessions/<session_id>/moves"
    assert (
        value(
            found,
            "cards_http_request_duration_seconds_count",
            route=moves_route,
            method="POST",
            status="200",
        )
        == human_moves + 1
    )
    assert (
        value(
            found,
            "cards_store_operation_duration_seconds_count",
            operation="commit",
            outcome="applied",
        )
        == human_moves + 1
    )
    assert value(found, "cards_store_unavailable_responses_total", route=moves_route) == 0


def test_metrics_answer_the_same_from_every_worker(played):
    server = played[0]
    # Many fresh connections spread over both workers; every answer counts the same games.
    counts = {
        value(samples(server.url), "cards_sessions_created_total", game="basra") for _ in range(8)
    }
    assert counts == {3}


def test_a_waiting_long_poll_is_counted_while_it_waits(played):
    waiting, after = played[3]
    assert waiting == 1
    assert after == 0


def test_no_label_holds_an_id_a_token_or_a_card(played):
    server, games, _, _ = played
    text = requests.get(f"{server.url}/metrics", timeout=10).text
    for game in games:
        assert game.id not in text
        for token in game.tokens.values():
            assert token not in text
    labels = [
        label
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        for label in sample.labels.values()
    ]
    assert not [label for label in labels if CARD.search(label)]
    assert {
        sample.labels["route"]
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if "route" in sample.labels
    } <= {
        "/v1/sessions",
        "/v1/sessions/<session_id>",
        "/v1/sessions/<session_id>/moves",
        "/v1/sessions/<session_id>/events",
        "/metrics",
        "/livez",
    }


def app_lines(log: Path) -> list[dict]:
    """The application's own JSON lines (gunicorn's access lines have no "logger")."""
    lines = []
    for line in log.read_text().splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            if "logger" in entry:
                lines.append(entry)
    return lines


def test_log_lines_of_a_whole_game_carry_request_route_and_session(played):
    _, games, directory, _ = played
    lines = app_lines(directory / "gunicorn.log")
    for game in games:
        mine = [line for line in lines if line.get("session_id") == game.id]
        # At INFO, the default, a session's life: created, its match over; each other
        # commit of moves is a DEBUG line (test_lean_path).
        told = [line["message"] for line in mine]
        assert told.count("session created") == 1
        assert "moves applied" not in told
        [over] = [line for line in mine if line["message"] == "match over"]
        assert over["version"] == game.version and over["moves"] >= 1
        for line in mine:
            assert re.fullmatch(r"[0-9a-f]{32}", line["request_id"])
            assert line["route"].startswith("/v1/sessions")
            assert line["level"] == "INFO"


def test_log_lines_hold_no_token_and_no_card(played):
    _, games, directory, _ = played
    text = (directory / "gunicorn.log").read_text()
    for game in games:
        for token in game.tokens.values():
            assert token not in text
    for line in app_lines(directory / "gunicorn.log"):
        assert not CARD.search(json.dumps(line)), line


def test_every_game_kept_its_history(played):
    for game in played[1]:
        assert isinstance(game, Hosted)
        check_history(game)


def test_metrics_can_be_switched_off(tmp_path):
    with gunicorn(tmp_path / "gunicorn.log", METRICS="false", LOG_LEVEL="warning") as server:
        answer = requests.get(f"{server.url}/metrics", timeout=10)
        assert answer.status_code == 404
        assert answer.headers["Content-Type"] == "application/problem+json"


FORKED = """
import os, sys
from service import metrics
from prometheus_client import CollectorRegistry, multiprocess, generate_latest

metrics.labelled(metrics.SESSIONS, "basra").inc()  # the parent's, in its own file
child = os.fork()
if child == 0:
    metrics.labelled(metrics.SESSIONS, "bank").inc()  # the child's, in the child's file
    os._exit(0)
os.waitpid(child, 0)
files = sorted(name for name in os.listdir(os.environ["PROMETHEUS_MULTIPROC_DIR"]))
print(" ".join(files))
registry = CollectorRegistry()
multiprocess.MultiProcessCollector(registry)
sys.stdout.write(generate_latest(registry).decode())
print("pids", os.getpid(), child)
"""


def test_a_forked_worker_counts_in_its_own_file(tmp_path):
    """The process id is read once, and again after a fork: a value a child counts goes to
    the child's own file, and the parent's stays in the parent's (gunicorn --preload forks
    its workers from a master that loaded the app)."""
    import subprocess
    import sys

    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    ran = subprocess.run([sys.executable, "-c", FORKED], env=env, capture_output=True,
                         text=True, check=True)  # fmt: skip
    lines = ran.stdout.splitlines()
    parent, child = lines[-1].split()[1:]
    assert f"counter_{parent}.db" in lines[0] and f"counter_{child}.db" in lines[0]
    text = "\n".join(lines[1:-1])
    assert 'cards_sessions_created_total{game="basra"} 1.0' in text
    assert 'cards_sessions_created_total{game="bank"} 1.0' in text
