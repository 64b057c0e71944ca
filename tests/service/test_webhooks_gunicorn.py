"""Webhooks are durable: real gunicorn (two workers) on a real Redis, a receiver on
loopback; a worker is SIGKILLed mid-play and later every worker at once, and still every
message of every match arrives at least once, per session in version order."""

import os
import signal
import time

import requests
from standardwebhooks.webhooks import Webhook

from tests.gunicorn_server import gunicorn
from tests.service.webhook_receiver import receiver

SHORT = {"preset": "levantine", "target_score": 1}
MATCHES = 3
TRIES = 100  # a call is retried this many times through a killed worker's dropped answers


def call(method: str, url: str, **options) -> requests.Response:
    """One call, retried (by count) while the service answers nothing or 503."""
    for _ in range(TRIES):
        try:
            answer = requests.request(method, url, timeout=30, **options)
        except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError):
            time.sleep(0.1)
            continue
        if answer.status_code != 503:
            return answer
        time.sleep(0.1)
    raise AssertionError(f"{method} {url} never answered")


def expected(record: dict) -> list[tuple[str, int]]:
    """The messages a human-against-bot match's record says were caused, in order: a turn
    for every version that left seat 0 (the human) to move, then the end."""
    moves = record["moves"]
    by_version = {move["version"]: move["seat"] for move in moves}
    last = moves[-1]["version"]
    said = [("session.turn", v) for v in range(last) if by_version[v + 1] == 0]
    return [*said, ("session.match_end", last)]


def test_no_message_is_lost_when_workers_are_killed_mid_play(redis_url, tmp_path):
    with (
        receiver() as hook,
        gunicorn(
            tmp_path / "gunicorn.log",
            REDIS_URL=redis_url,
            WEB_CONCURRENCY="2",
            WEBHOOK_HOSTS="127.0.0.1",
            WEBHOOK_RETRY_SECONDS="0.2",
            WEBHOOK_SCAN_SECONDS="0.1",
            LOG_LEVEL="warning",
        ) as served,
    ):
        matches = []
        for number in range(MATCHES):
            body = {"game": "basra", "rules": SHORT, "webhook": {"url": hook.url},
                    "seats": [{"type": "human"}, {"type": "bot", "level": "greedy"}]}  # fmt: skip
            created = call("POST", f"{served.url}/v1/sessions", json=body,
                           headers={"Idempotency-Key": f"match-{number}"}).json()  # fmt: skip
            auth = {"Authorization": f"Bearer {created['seats'][0]['token']}"}
            matches.append((f"{served.url}/v1/sessions/{created['id']}", auth, created))
        playing, moved = list(matches), 0
        while playing:
            for match in list(playing):
                url, auth, _ = match
                answer = call("GET", url, headers=auth).json()
                if not answer["moves"]:
                    playing.remove(match)
                    continue
                move = {"move": answer["moves"][0], "version": answer["version"]}
                key = {"Idempotency-Key": f"v{answer['version']}", **auth}
                assert call("POST", f"{url}/moves", json=move, headers=key).status_code in (
                    200,
                    409,
                )
                moved += 1
                if moved == 4:
                    os.kill(served.workers()[0], signal.SIGKILL)
                if moved == 12:
                    for worker in served.workers():
                        os.kill(worker, signal.SIGKILL)
        assert moved > 12
        wanted = {}
        for url, auth, created in matches:
            record = call("GET", f"{url}/record", headers=auth).json()
            wanted[created["id"]] = (expected(record), created["webhook"]["secret"])
        for _ in range(600):  # delivered soon after: bounded by count
            got = {session_id: [] for session_id in wanted}
            for message in hook.delivered():
                data = message["data"]
                got[data["session_id"]].append((message["type"], data["version"]))
            if all(got[session_id] == want for session_id, (want, _) in wanted.items()):
                break
            time.sleep(0.1)
        for session_id, (want, _) in wanted.items():
            assert got[session_id] == want, session_id
        for kept in hook.received:  # every request, retries too, verifies with its secret
            Webhook(wanted[kept.message["data"]["session_id"]][1]).verify(kept.body, kept.headers)
