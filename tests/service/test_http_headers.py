"""The headers a client meets on every answer: CORS (CORS_ORIGINS), `Cache-Control: no-store`
on the API's answers, and ETag / If-None-Match on session reads (both stores)."""

import pytest
import requests

from service import create_app
from tests.service.sessions_client import Seat, create

ORIGIN = "https://play.example"
HUMANS = [{"type": "human"}, {"type": "human"}]
PREFLIGHT = {
    "Origin": ORIGIN,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
}


def client_with(**settings):
    return create_app({"REDIS_URL": None, **settings}).test_client()


def listed(header: str | None) -> set[str]:
    return {part.strip().lower() for part in (header or "").split(",") if part.strip()}


# -- CORS ---------------------------------------------------------------------------------


def test_cors_is_off_by_default():
    client = client_with()
    assert (
        "Access-Control-Allow-Origin"
        not in client.get("/v1/games", headers={"Origin": ORIGIN}).headers
    )
    preflight = client.options("/v1/sessions", headers=PREFLIGHT)
    assert "Access-Control-Allow-Origin" not in preflight.headers


def test_a_listed_origin_passes_the_preflight_with_the_headers_it_needs():
    client = client_with(CORS_ORIGINS=f"{ORIGIN}, http://localhost:3000")
    preflight = client.options("/v1/sessions/x/moves", headers=PREFLIGHT)
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert listed(preflight.headers["Access-Control-Allow-Headers"]) == {
        "authorization", "content-type", "idempotency-key"
    }  # fmt: skip
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
    for asked in ("If-None-Match", "Last-Event-ID"):
        headers = {**PREFLIGHT, "Access-Control-Request-Method": "GET",
                   "Access-Control-Request-Headers": asked}  # fmt: skip
        answered = client.options("/v1/sessions/x/stream", headers=headers)
        assert listed(answered.headers["Access-Control-Allow-Headers"]) == {asked.lower()}


def test_a_simple_request_from_a_listed_origin_may_read_the_headers_a_client_needs():
    client = client_with(CORS_ORIGINS=ORIGIN)
    created = client.post("/v1/sessions", json={"seats": HUMANS}, headers={"Origin": ORIGIN})
    assert created.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert {"etag", "retry-after", "location", "x-request-id"} <= listed(
        created.headers["Access-Control-Expose-Headers"]
    )
    refused = client.get("/v1/sessions/x", headers={"Origin": ORIGIN})  # problems too
    assert refused.status_code == 404
    assert refused.headers["Access-Control-Allow-Origin"] == ORIGIN


def test_another_origin_gets_no_cors_headers():
    client = client_with(CORS_ORIGINS=ORIGIN)
    answer = client.get("/v1/games", headers={"Origin": "https://elsewhere.example"})
    assert "Access-Control-Allow-Origin" not in answer.headers
    preflight = client.options("/v1/sessions", headers={**PREFLIGHT, "Origin": "https://x.example"})
    assert "Access-Control-Allow-Origin" not in preflight.headers


def test_a_star_lets_any_origin_in_without_credentials():
    answer = client_with(CORS_ORIGINS="*").get("/v1/games", headers={"Origin": ORIGIN})
    assert answer.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in answer.headers


@pytest.mark.parametrize("setting", ["play.example", "https://*.example", "https://a.example/x"])
def test_an_entry_that_is_not_an_origin_is_refused_at_start_up(setting):
    with pytest.raises(ValueError, match="CORS_ORIGINS"):
        create_app({"REDIS_URL": None, "CORS_ORIGINS": setting})


# -- Cache-Control --------------------------------------------------------------------------


def test_answers_with_states_hands_or_tokens_are_no_store_and_the_catalogue_is_not(client):
    state = client.post("/v1/games/basra/new", json={"seed": "s"}).get_json()
    for answer in (
        client.post("/v1/games/basra/new", json={}),
        client.post("/v1/games/basra/legal-moves", json=state),
        client.post("/v1/games/basra/view", json={**state, "seat": 0}),
        client.post("/v1/games/basra/apply", json={**state, "move": {"card": "2C"}}),  # a 422
    ):
        assert answer.headers["Cache-Control"] == "no-store"
    assert "no-store" not in client.get("/v1/games").headers.get("Cache-Control", "")
    assert "no-store" not in client.get("/openapi.yaml").headers.get("Cache-Control", "")


def test_every_session_answer_is_no_store(client):
    created = client.post("/v1/sessions", json={"seats": HUMANS, "spectators": 1})
    assert created.headers["Cache-Control"] == "no-store"
    body = created.get_json()
    path = f"/v1/sessions/{body['id']}"
    seat = {"Authorization": f"Bearer {body['seats'][0]['token']}"}
    read = client.get(path, headers=seat)
    move = read.get_json()["moves"][0]
    answers = [
        read,
        client.post(
            f"{path}/moves",
            headers=seat,
            json={"version": 0, "move": {"card": move["card"], "capture": move["capture"]}},
        ),
        client.get(f"{path}/events?after=0", headers=seat),
        client.post(f"{path}/spectators", headers=seat),
    ]
    stream = client.get(f"{path}/stream", headers=seat, buffered=False)
    answers.append(stream)
    for answer in answers:
        assert answer.status_code in (200, 201), answer.get_data(as_text=True)
        assert answer.headers["Cache-Control"] == "no-store"
    stream.close()


# -- ETag and If-None-Match, both stores ------------------------------------------------------


def tag_of(response: requests.Response) -> str:
    assert response.status_code == 200
    tag = response.headers["ETag"]
    assert tag.startswith('W/"') and tag.endswith('"')
    return tag


def test_a_read_carries_an_etag_per_reader_and_if_none_match_answers_304(base):
    created = create(base, HUMANS, spectators=1).json()
    tokens = [seat["token"] for seat in created["seats"]] + [created["spectators"][0]["token"]]
    readers = [Seat(base, created["id"], token, []) for token in tokens]
    tags = [tag_of(reader.get()) for reader in readers]
    assert len(set(tags)) == 3  # each seat and the spectator see different answers
    assert not any(token in tag for token in tokens for tag in tags)
    for reader, tag in zip(readers, tags, strict=True):
        again = reader.http.get(reader.url, headers={"If-None-Match": tag}, timeout=30)
        assert again.status_code == 304
        assert again.content == b""
        assert again.headers["ETag"] == tag
        assert again.headers["Cache-Control"] == "no-store"
    # Another reader's tag is not this reader's answer.
    other = readers[0].http.get(readers[0].url, headers={"If-None-Match": tags[1]}, timeout=30)
    assert other.status_code == 200


def test_a_move_changes_every_readers_etag(base):
    created = create(base, HUMANS, seed="etag").json()
    readers = [Seat(base, created["id"], seat["token"], []) for seat in created["seats"]]
    before = [tag_of(reader.get()) for reader in readers]
    mover = next(reader for reader in readers if reader.get().json()["moves"])
    move = mover.get().json()["moves"][0]
    assert mover.move({"card": move["card"], "capture": move["capture"]}, 0).status_code == 200
    for reader, tag in zip(readers, before, strict=True):
        after = reader.http.get(reader.url, headers={"If-None-Match": tag}, timeout=30)
        assert after.status_code == 200
        assert tag_of(after) != tag
