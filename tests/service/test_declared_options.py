"""Every rule option a game declares (engine/<game>/rules.py, as shapes) is one truth: each
value the declaration allows is accepted by a new game, each other value is refused with a
422 naming `rules.<option>`, and openapi.yaml documents exactly the declaration (a list
option as a request sends it: [] reads as left out, for the clients that write a list left
unset as [], tests/service/test_unset_lists.py)."""

import pytest
import yaml

from engine.game import games, get_game
from service import create_app
from service.schemas.derived import requested, title_of
from tests.service.openapi_conformance import OPENAPI

DOCUMENT = yaml.load(OPENAPI.read_text(), Loader=yaml.CSafeLoader)
CASES = [(name, option) for name, game in games().items() for option in game.shapes.options]


def allowed(shape: dict) -> list:
    """Values the shape allows: every enum value, both booleans, an integer's bounds."""
    if shape["type"] == "array":
        return [[value] for value in allowed(shape["items"])] + [shape["items"]["enum"]]
    if "enum" in shape:
        return list(shape["enum"])
    if shape["type"] == "boolean":
        return [True, False]
    low = shape.get("minimum", 0)
    return [low, low + 1, *([shape["maximum"]] if "maximum" in shape else [])]


def refused(shape: dict) -> list:
    """Values of the wrong type, outside the enum or the bounds."""
    wrong_type = ["1", None, 1.5, {}] + ([] if shape["type"] == "boolean" else [True])
    if shape["type"] == "array":
        return [[99], "2", [True]]  # [] reads as left out
    if "enum" in shape:
        outside = "nope" if shape["type"] == "string" else max(shape["enum"]) + 1
        return [*wrong_type, outside] if shape["type"] != "boolean" else [1, 0, "true"]
    if shape["type"] == "boolean":
        return [1, 0, "true", None]
    bounds = [shape["minimum"] - 1] if "minimum" in shape else []
    return [*wrong_type, *bounds, *([shape["maximum"] + 1] if "maximum" in shape else [])]


@pytest.fixture(scope="module")
def client():
    return create_app({"REDIS_URL": None}).test_client()


def new_game(client, name: str, option: str, value: object):
    seats = value[0] if option == "seats_allowed" and value and type(value[0]) is int else None
    body = {"rules": {option: value}, "seed": "options", **({"seats": seats} if seats else {})}
    return client.post(f"/v1/games/{name}/new", json=body)


@pytest.mark.parametrize(("name", "option"), CASES)
def test_every_declared_value_is_accepted_and_every_other_refused(client, name, option):
    shape = get_game(name).shapes.options[option]
    for value in allowed(shape):
        answer = new_game(client, name, option, value)
        assert answer.status_code == 200, (value, answer.get_json())
        assert answer.get_json()["state"]["rules"][option] == value
    for value in refused(shape):
        answer = new_game(client, name, option, value)
        assert answer.status_code == 422, (value, answer.get_json())
        assert f"rules.{option}" in answer.get_json()["errors"], (value, answer.get_json())


@pytest.mark.parametrize(("name", "option"), CASES)
def test_openapi_documents_the_declaration(name, option):
    title = title_of(name)
    schemas = DOCUMENT["components"]["schemas"]
    declared = get_game(name).shapes.options[option]
    assert schemas[f"{title}Rules"]["properties"][option] == requested(declared)
    assert schemas[f"{title}ResolvedRules"]["properties"][option] == declared


def test_an_unknown_option_is_refused_naming_it(client):
    for name in games():
        answer = client.post(f"/v1/games/{name}/new", json={"rules": {"no_such_option": 1}})
        assert answer.status_code == 422 and "rules.no_such_option" in answer.get_json()["errors"]
