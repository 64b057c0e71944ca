"""Every registered game is served at /v1/games/<game>/...: a game with no schema module
of its own is served with open object schemas, and an unknown game is a 404 problem."""

import pytest
import yaml

from engine import game as registry
from engine.basra.game import Basra
from service import create_app
from service.openapi import production_spec_yaml

ACTIONS = ("new", "legal-moves", "apply", "score", "view", "hint")


class Toy(Basra):
    """A game no module of service/ knows by name (Basra's rules under another name)."""

    name = "toy"


@pytest.fixture
def toy_client(monkeypatch):
    registry.games()
    monkeypatch.setitem(registry._GAMES, "toy", Toy())
    return create_app({"REDIS_URL": None, "LONG_POLL_SECONDS": 0.0}).test_client()


def test_a_game_without_a_schema_module_is_played_on_its_own_paths(toy_client):
    client = toy_client
    names = [game["name"] for game in client.get("/v1/games").get_json()["games"]]
    assert "toy" in names
    state = client.post("/v1/games/toy/new", json={"seed": "toy"}).get_json()["state"]
    moves = client.post("/v1/games/toy/legal-moves", json={"state": state}).get_json()["moves"]
    answer = client.post("/v1/games/toy/apply", json={"state": state, "move": moves[0]})
    assert answer.status_code == 200 and answer.get_json()["events"]
    after = answer.get_json()["state"]
    assert client.post("/v1/games/toy/score", json={"state": after}).status_code == 200
    view = client.post("/v1/games/toy/view", json={"state": after, "seat": 0}).get_json()
    assert view["view"]["hand"] == after["hands"][0]
    hint = client.post("/v1/games/toy/hint", json={"state": after, "level": "random"})
    assert hint.status_code == 200
    bad = client.post("/v1/games/toy/view", json={"state": after, "seat": 7})
    assert bad.status_code == 422 and list(bad.get_json()["errors"]) == ["seat"]
    seats = [{"type": "human"}, {"type": "bot", "level": "greedy"}]
    created = client.post("/v1/sessions", json={"game": "toy", "seats": seats})
    assert created.status_code == 201 and created.get_json()["game"] == "toy"


def test_a_game_without_a_schema_module_is_documented_with_open_objects(toy_client):
    document = yaml.safe_load(toy_client.get("/openapi.yaml").get_data(as_text=True))
    for action in ACTIONS:
        assert f"/v1/games/toy/{action}" in document["paths"]
    schemas = document["components"]["schemas"]
    assert schemas["ToyState"]["additionalProperties"] is True
    apply = schemas["ToyApplyRequest"]["properties"]
    assert apply["state"]["allOf"] == [{"$ref": "#/components/schemas/ToyState"}]
    assert apply["move"]["$ref"] == "#/components/schemas/ToyMove"


def test_every_registered_game_has_each_path_with_its_own_schemas():
    document = yaml.safe_load(production_spec_yaml())
    for name in registry.games():
        title = name.capitalize()
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
        events = schemas[f"{title}ApplyResponse"]["properties"]["events"]["items"]
        assert len(events["oneOf"]) > 1
        assert all(f"/{title}" in event["$ref"] for event in events["oneOf"])
        # One schema per event type, told apart by `type` through an explicit mapping.
        mapping = events["discriminator"]["mapping"]
        assert events["discriminator"]["propertyName"] == "type"
        assert sorted(mapping.values()) == sorted(event["$ref"] for event in events["oneOf"])
        for tag, target in mapping.items():
            tagged = schemas[target.rsplit("/", 1)[1]]["properties"]["type"]
            assert tagged["enum"] == [tag]


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
