"""Every rule option a game declares (engine/<game>/rules.py, as shapes) is one truth: each
value the declaration allows is accepted by a new game, each other value is refused with a
422 naming `rules.<option>`, and openapi.yaml documents exactly the declaration (a list
option as a request sends it: [] reads as left out, for the clients that write a list left
unset as [], tests/service/test_unset_lists.py)."""

import jsonschema_rs
import pytest
import yaml

from engine.game import games, get_game
from service import create_app
from service.schemas.derived import never_empty, requested, title_of
from tests.service.openapi_conformance import OPENAPI

DOCUMENT = yaml.load(OPENAPI.read_text(), Loader=yaml.CSafeLoader)
CASES = [(name, option) for name, game in games().items() for option in game.shapes.options]


def allowed(shape: dict) -> list:
    """Values the shape allows: every enum value, both booleans, a number's bounds (and a
    fraction between them), strings and lists of the shortest and longest lengths allowed
    (an unseen game may declare any keyword `shapes.conforms` reads), each one checked
    against JSON Schema itself, as openapi.yaml documents the option."""
    return [value for value in candidates(shape) if valid(shape, value)]


def candidates(shape: dict) -> list:
    if "enum" in shape:
        return list(shape["enum"])
    kind = shape["type"]
    if kind == "boolean":
        return [True, False]
    if kind == "array":
        low, high = shape.get("minItems", 0), shape.get("maxItems")
        found = [[value] * max(low, 1) for value in candidates(shape["items"])]
        if "enum" in shape["items"]:
            found.append(list(shape["items"]["enum"]))
        if high is not None and found:
            found.append([found[0][0]] * high)
        return [value for value in found if low <= len(value) <= (high or len(value))]
    if kind == "string":
        low, high = shape.get("minLength", 0), shape.get("maxLength", 8)
        return [letter * size for letter in "ab1A" for size in {max(low, 1), high}]
    low = shape.get("minimum", 0)
    high = shape.get("maximum", low + 2)
    found = [low, low + 1, high]
    return [*found, (low + high) / 2] if kind == "number" else found


def refused(shape: dict) -> list:
    """Values of the wrong type, outside the enum, the bounds, the lengths or the pattern:
    every candidate JSON Schema refuses."""
    wrong_type = ["1", None, 1.5, {}, True, 1, [], [99], [True], "nope", "x" * 300]
    kind = shape["type"]
    if kind == "array":
        high = shape.get("maxItems")
        fine = candidates(shape["items"])
        wrong_type += [[fine[0]] * (high + 1)] if high is not None and fine else []
        wrong_type += [["nope"], [[]], [1.5]]
    elif kind in ("integer", "number"):
        wrong_type += [shape.get("minimum", 0) - 1, shape.get("maximum", 0) + 1]
        wrong_type += [max(shape.get("enum", [0])) + 1] if "enum" in shape else []
    elif kind == "string":
        wrong_type += ["", "1", "a" * (shape.get("maxLength", 8) + 1)]
    # [] reads as left out where the option cannot be empty (tests/service/test_unset_lists.py).
    return [value for value in wrong_type
            if not valid(shape, value) and not (value == [] and never_empty(shape))]  # fmt: skip


def valid(shape: dict, value: object) -> bool:
    """Whether JSON Schema takes `value` for `shape`: 2.0 is an integer there and not in
    the engine (JSON's `2.0` reads back as a float), so no candidate is a whole float."""
    return jsonschema_rs.Draft202012Validator(shape).is_valid(value)


@pytest.fixture(scope="module")
def client():
    return create_app({"REDIS_URL": None}).test_client()


def new_game(client, name: str, option: str, value: object):
    listed = option == "seats_allowed" and isinstance(value, list) and value
    seats = value[0] if listed and type(value[0]) is int else None
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
