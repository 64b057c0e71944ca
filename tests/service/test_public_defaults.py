"""Defaults that hold on a public address: a seed is at most 128 characters wherever one is
accepted (a 422 naming it, declared in the document), and /metrics answers only to the bearer
of METRICS_TOKEN when that is set."""

import pytest
import yaml

from engine.game import games
from engine.shapes import MAX_SEED_LENGTH
from service import create_app
from service.openapi import production_spec_yaml

LONG = "s" * (MAX_SEED_LENGTH + 1)
LONGEST = "s" * MAX_SEED_LENGTH
APP_CONFIG = {"CLIENT_SEEDS": True}


def seats(humans: int, game: str) -> list[dict]:
    """`humans` human seats (as many as the game seats), then bots: the game's fewest seats,
    two at least when it allows two or more."""
    counts = games()[game].catalogue()["seats"]
    count = min((count for count in counts if count >= 2), default=max(counts))
    humans = min(humans, count)
    return [{"type": "human"}] * humans + [{"type": "bot", "level": "random"}] * (count - humans)


def assert_names_seed(answer, path: str = "seed") -> None:
    assert answer.status_code == 422, answer.get_json()
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert list(answer.get_json()["errors"]) == [path]


@pytest.mark.parametrize("game", games())
def test_a_seed_over_128_characters_is_a_422_naming_it_everywhere(client, game):
    assert_names_seed(client.post(f"/v1/games/{game}/new", json={"seed": LONG}))
    state = client.post(f"/v1/games/{game}/new", json={"seed": LONGEST}).get_json()["state"]
    assert_names_seed(client.post(f"/v1/games/{game}/hint", json={"state": state, "seed": LONG}))
    for humans in (1, 2):
        session = {"game": game, "seats": seats(humans, game), "seed": LONG}
        assert_names_seed(client.post("/v1/sessions", json=session))
    # A state's seed is bounded alike (it is what later deals derive from).
    too_long = {**state, "seed": LONG}
    assert_names_seed(client.post(f"/v1/games/{game}/legal-moves", json={"state": too_long}),
                      "state.seed")  # fmt: skip


@pytest.mark.parametrize("game", games())
def test_a_seed_of_128_characters_is_taken(client, game):
    assert client.post(f"/v1/games/{game}/new", json={"seed": LONGEST}).status_code == 200
    session = {"game": game, "seats": seats(1, game), "seed": LONGEST}
    assert client.post("/v1/sessions", json=session).status_code == 201


def test_the_document_declares_the_bound_on_every_seed():
    schemas = yaml.safe_load(production_spec_yaml())["components"]["schemas"]
    # Every schema with a seed but the deal's commitment (an answer, revealing the seed).
    seeds = {
        name: schema["properties"]["seed"]
        for name, schema in schemas.items()
        if "seed" in schema.get("properties", {}) and "commitment" not in schema["properties"]
    }
    assert seeds
    for name, seed in seeds.items():
        assert seed.get("maxLength") == MAX_SEED_LENGTH, name


def test_metrics_answer_only_the_bearer_of_metrics_token():
    client = create_app({"METRICS_TOKEN": "scrape-me"}).test_client()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic scrape-me"}):
        refused = client.get("/metrics", headers=headers)
        assert refused.status_code == 401
        assert refused.headers["Content-Type"] == "application/problem+json"
        assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    allowed = client.get("/metrics", headers={"Authorization": "Bearer scrape-me"})
    assert allowed.status_code == 200
    assert b"cards_http_request_duration_seconds" in allowed.data


def test_metrics_are_open_without_metrics_token():
    assert create_app().test_client().get("/metrics").status_code == 200
