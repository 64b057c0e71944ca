"""Rate limits per client address and per seat token (Flask-Limiter): off by default, a 429
problem with Retry-After over the limit, counted in this process without Redis and across
gunicorn workers with it, and a limited client does not hold up anyone else."""

import http.client
import threading

import pytest
import redis
import requests

from service import create_app
from tests.gunicorn_server import gunicorn
from tests.service.hosted_games import play_out, start

HUMANS = [{"type": "human"}, {"type": "human"}]
SESSION = {"game": "basra", "seats": HUMANS}


def client_at(app, address: str):
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    return client


def test_no_limit_by_default():
    client = create_app().test_client()
    assert {client.get("/v1/games").status_code for _ in range(200)} == {200}


def test_the_address_limit_is_per_address_and_answers_a_429_problem():
    app = create_app({"RATE_LIMIT_ADDRESS": "5/minute"})
    busy, other = client_at(app, "10.0.0.1"), client_at(app, "10.0.0.2")
    statuses = [busy.get("/v1/games").status_code for _ in range(8)]
    assert statuses == [200] * 5 + [429] * 3
    refused = busy.get("/v1/games")
    assert refused.headers["Content-Type"] == "application/problem+json"
    assert 1 <= int(refused.headers["Retry-After"]) <= 120
    assert refused.json["status"] == 429
    assert refused.json["detail"].startswith(
        "too many requests from this client address: at most 5 per 1 minute"
    )
    assert other.get("/v1/games").status_code == 200


def test_probes_and_scrapes_are_never_limited():
    client = create_app({"RATE_LIMIT_ADDRESS": "1/minute"}).test_client()
    for path in ["/livez", "/readyz", "/metrics"] * 5:
        assert client.get(path).status_code == 200, path


def test_the_token_limit_is_per_seat_token():
    app = create_app({"RATE_LIMIT_TOKEN": "3/minute"})
    client = app.test_client()
    created = client.post("/v1/sessions", json=SESSION).get_json()
    url = f"/v1/sessions/{created['id']}"
    first, second = (f"Bearer {seat['token']}" for seat in created["seats"])
    statuses = [client.get(url, headers={"Authorization": first}).status_code for _ in range(5)]
    assert statuses == [200, 200, 200, 429, 429]
    refused = client.get(url, headers={"Authorization": first})
    assert refused.json["detail"].startswith("too many requests from this seat token")
    assert "Retry-After" in refused.headers
    assert client.get(url, headers={"Authorization": second}).status_code == 200
    # Calls without a token (creating a session) are not counted against any token.
    assert {client.post("/v1/sessions", json=SESSION).status_code for _ in range(5)} == {201}


@pytest.mark.parametrize("setting", ["RATE_LIMIT_ADDRESS", "RATE_LIMIT_TOKEN"])
@pytest.mark.parametrize("text", ["lots", "5/fortnight", "-1/second"])
def test_a_setting_that_is_no_limit_stops_the_start(setting, text):
    with pytest.raises(ValueError, match=f"{setting}='.*' is not a rate limit"):
        create_app({setting: text})


def get_from(address: str, port: int, path: str) -> int:
    """GET from a chosen loopback source address (127.0.0.2 is another client)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10,
                                            source_address=(address, 0))  # fmt: skip
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    finally:
        connection.close()


def test_limits_are_shared_by_workers_through_redis_and_spare_other_clients(redis_url, tmp_path):
    with gunicorn(
        tmp_path / "gunicorn.log",
        REDIS_URL=redis_url,
        WEB_CONCURRENCY="2",
        RATE_LIMIT_ADDRESS="40/minute",
        RATE_LIMIT_TOKEN="6/minute",
        LOG_LEVEL="warning",
    ) as server:  # fmt: skip
        created = requests.post(f"{server.url}/v1/sessions", json=SESSION, timeout=10).json()
        url = f"{server.url}/v1/sessions/{created['id']}"
        tokens = [seat["token"] for seat in created["seats"]]
        # Fresh connections, spread over both workers: one count for the token.
        statuses = [
            requests.get(
                url, headers={"Authorization": f"Bearer {tokens[0]}"}, timeout=10
            ).status_code
            for _ in range(9)
        ]
        assert statuses == [200] * 6 + [429] * 3
        assert (
            requests.get(
                url, headers={"Authorization": f"Bearer {tokens[1]}"}, timeout=10
            ).status_code
            == 200
        )

        # A client at 127.0.0.2 runs into its address limit while this one plays on.
        hammered: list[int] = []
        hammer = threading.Thread(
            target=lambda: hammered.extend(
                get_from("127.0.0.2", server.port, "/v1/games") for _ in range(60)
            )
        )
        hammer.start()
        versus_bot = [{"type": "human"}, {"type": "bot", "level": "random"}]
        other = play_out(start(server.url, versus_bot), turns=2)
        hammer.join()
        assert set(other.seen.statuses) == {200}
        assert hammered.count(200) == 40
        assert set(hammered) == {200, 429}

        # The limits' keys in Redis name no token.
        with redis.Redis.from_url(redis_url) as client:
            keys = b" ".join(client.keys("*"))
        assert b"cards-limits" in keys
        assert not [token for token in tokens if token.encode() in keys]
