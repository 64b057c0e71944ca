"""A list a request may leave out reads the same sent empty: the clients OpenAPI Generator
makes for java (native, okhttp-gson) write every list field left unset as [] (the model
starts it as an empty list). A Bank draw built or read by such a client carries `cards: []`,
a Basra rules object `seats_allowed: []`, a webhook `events: []`: each played, was refused,
or made a webhook that sends nothing."""

from types import SimpleNamespace

import yaml

from service.requests import given
from service.schemas.derived import SCHEMAS as PREFIX
from service.schemas.derived import requested
from tests.service.openapi_conformance import OPENAPI

DOCUMENT = yaml.safe_load(OPENAPI.read_text())
METHODS = {"get", "put", "post", "delete", "patch"}


def component(ref: str) -> tuple[str, dict]:
    name = ref.removeprefix(PREFIX)
    return name, DOCUMENT["components"]["schemas"][name]


def optional_lists(name: str, schema: dict, seen: set[str]):
    """(component, field, its schema) of every list a request may leave out, reached from
    `schema` through references, unions and items."""
    if "$ref" in schema:
        name, schema = component(schema["$ref"])
        if name in seen:
            return
        seen.add(name)
    for member in schema.get("oneOf", []) + schema.get("anyOf", []) + schema.get("allOf", []):
        yield from optional_lists(name, member, seen)
    required = set(schema.get("required", []))
    for field, shape in schema.get("properties", {}).items():
        kinds = shape.get("type")
        if field not in required and "array" in (kinds if isinstance(kinds, list) else [kinds]):
            yield name, field, shape
        yield from optional_lists(name, shape, seen)
    if isinstance(schema.get("items"), dict):
        yield from optional_lists(name, schema["items"], seen)


def request_bodies():
    for item in DOCUMENT["paths"].values():
        for method, operation in item.items():
            if method in METHODS and "requestBody" in operation:
                yield operation["requestBody"]["content"]["application/json"]["schema"]


def test_no_list_a_request_may_leave_out_must_hold_an_item():
    seen: set[str] = set()
    found = [
        (name, field)
        for body in request_bodies()
        for name, field, shape in optional_lists("", body, seen)
        if shape.get("minItems", 0) > 0
    ]
    assert not found, found
    assert seen  # the walk reached the components


def bank(client, action: str, body: dict) -> dict:
    answer = client.post(f"/v1/games/bank/{action}", json=body)
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def test_a_bank_move_that_lists_no_cards_plays_as_without(client):
    state = bank(client, "new", {"seats": 3, "seed": "unset"})["state"]
    kinds = set()
    for _ in range(60):
        moves = bank(client, "legal-moves", {"state": state})["moves"]
        if not moves:
            break
        move = next((m for m in moves if m["type"] not in ("quad", "run")), moves[0])
        kinds.add(move["type"])
        played = bank(client, "apply", {"state": state, "move": move})
        if "cards" not in move:
            assert bank(client, "apply", {"state": state, "move": {**move, "cards": []}}) == played
        state = played["state"]
    assert {"lay", "draw"} <= kinds


def test_basra_rules_with_no_seat_counts_are_the_preset_s(client):
    def new(rules: dict) -> dict:
        answer = client.post("/v1/games/basra/new", json={"seats": 2, "seed": "s", "rules": rules})
        assert answer.status_code == 200, answer.get_json()
        return answer.get_json()

    assert new({"preset": "egyptian", "seats_allowed": []}) == new({"preset": "egyptian"})
    assert new({"seats_allowed": []}) == new({})


def test_only_a_list_option_that_cannot_be_empty_reads_as_left_out_sent_empty():
    # A game may have a list option whose [] means something (no card banned, say): that
    # [] is the game's to read, not the service's to drop.
    options = {
        "never_empty": {"type": "array", "items": {"type": "integer"}, "minItems": 1},
        "may_be_empty": {"type": "array", "items": {"type": "integer"}},
    }
    game = SimpleNamespace(shapes=SimpleNamespace(options=options))
    rules = {"never_empty": [], "may_be_empty": [], "other": 1}
    assert given(game, rules) == {"may_be_empty": [], "other": 1}
    assert requested(options["may_be_empty"]) == options["may_be_empty"]
    assert "minItems" not in requested(options["never_empty"])
