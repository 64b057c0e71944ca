"""Every registered game is served at /v1/games/<game>/... with its own schemas (a game
the service has never seen: tests/service/test_a_new_game.py), and an unknown game is a
404 problem."""

import pytest
import yaml

from engine import game as registry
from service import create_app
from service.openapi import production_spec_yaml
from service.schemas.derived import title_of

ACTIONS = ("new", "legal-moves", "apply", "score", "view", "hint")


def test_every_registered_game_has_each_path_with_its_own_schemas():
    document = yaml.safe_load(production_spec_yaml())
    for name in registry.games():
        title = title_of(name)  # `high_bid` -> `HighBid`, as the document names it
        for action in ACTIONS:
            operation = document["paths"][f"/v1/games/{name}/{action}"]["post"]
            body = operation["requestBody"]["content"]["application/json"]["schema"]
            assert body["$ref"].startswith(f"#/components/schemas/{title}"), (action, body)
            answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
            assert answer["$ref"].startswith(f"#/components/schemas/{title}"), (action, answer)
        schemas = document["components"]["schemas"]
        assert schemas[f"{title}ApplyRequest"]["properties"]["move"] == {
            "$ref": f"#/components/schemas/{title}Move"
        }
        items = schemas[f"{title}ApplyResponse"]["properties"]["events"]["items"]
        assert items == {"$ref": f"#/components/schemas/{title}Event"}
        events = schemas[f"{title}Event"]
        assert len(events["oneOf"]) > 1
        assert all(f"/{title}" in event["$ref"] for event in events["oneOf"])
        # One schema per event type, told apart by `type` through an explicit mapping.
        mapping = events["discriminator"]["mapping"]
        assert events["discriminator"]["propertyName"] == "type"
        assert sorted(mapping.values()) == sorted(event["$ref"] for event in events["oneOf"])
        for tag, target in mapping.items():
            tagged = schemas[target.rsplit("/", 1)[1]]["properties"]["type"]
            assert tagged["const"] == tag


@pytest.mark.parametrize("action", [*ACTIONS, "nope/deeper"])
def test_an_unknown_game_is_a_404_problem_naming_the_games_there_are(action):
    client = create_app({"REDIS_URL": None}).test_client()
    for method in (client.get, client.post, client.delete):
        response = method(f"/v1/games/chess/{action}", json={})
        assert response.status_code == 404
        assert response.content_type == "application/problem+json"
        detail = response.get_json()["detail"]
        assert "chess" in detail and all(name in detail for name in registry.games())


def test_a_known_game_keeps_its_405_and_404_answers():
    client = create_app({"REDIS_URL": None}).test_client()
    for name in registry.games():
        assert client.get(f"/v1/games/{name}/apply").status_code == 405
        assert client.post(f"/v1/games/{name}/nope", json={}).status_code == 404
