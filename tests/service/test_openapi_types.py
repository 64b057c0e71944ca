"""openapi.yaml types every payload by name, precisely enough for a strict typed client:
every field a view carries is declared, rules list their options, events and views are
unions told apart by an explicit mapping, and requests say what the service accepts."""

import jsonschema_rs
import pytest
import yaml

from engine.game import games, get_game
from service import create_app
from service.schemas.derived import any_game_event, title_of
from tests.service.openapi_conformance import OPENAPI

DOCUMENT = yaml.safe_load(OPENAPI.read_text())
SCHEMAS = DOCUMENT["components"]["schemas"]
GAMES = list(games())


def component(name: str) -> dict:
    """The component with every $ref resolvable (for jsonschema)."""
    return {**SCHEMAS[name], "components": {"schemas": SCHEMAS}}


def validate(instance: object, name: str) -> None:
    jsonschema_rs.Draft202012Validator(component(name)).validate(instance)


def seat_view(game: str, seats: int) -> dict:
    client = create_app().test_client()
    state = client.post(f"/v1/games/{game}/new", json={"seats": seats, "seed": "types"})
    answer = client.post(f"/v1/games/{game}/view", json={"state": state.get_json()["state"],
                                                          "seat": 0})  # fmt: skip
    return answer.get_json()["view"]


@pytest.mark.parametrize("game", GAMES)
def test_every_option_of_every_game_is_declared_in_its_rules(game):
    title = title_of(game)
    catalogue = get_game(game).catalogue()
    request = SCHEMAS[f"{title}Rules"]["properties"]
    resolved = SCHEMAS[f"{title}ResolvedRules"]
    assert set(request) == {"preset", *catalogue["options"]}
    assert set(resolved["required"]) == {"preset", *catalogue["options"]}
    assert request["preset"]["enum"] == sorted(catalogue["presets"])
    for preset in catalogue["presets"].values():
        validate(preset, f"{title}ResolvedRules")


@pytest.mark.parametrize(("game", "seats"), [("basra", 2), ("basra", 4), ("bank", 3)])
def test_a_view_carries_only_declared_fields_and_matches_them(game, seats):
    view = seat_view(game, seats)
    declared = SCHEMAS[f"{title_of(game)}View"]["properties"]
    assert set(view) <= set(declared), set(view) - set(declared)
    assert declared["game"]["const"] == game
    assert declared["status"]["enum"] == ["playing", "match_over"]
    validate(view, f"{title_of(game)}View")


@pytest.mark.parametrize(
    "union", ["SessionResponse", "SessionMoveResponse", "CreateSessionRequest"]
)
def test_a_session_s_answers_and_creation_are_one_schema_per_game_told_apart_by_game(union):
    assert SCHEMAS[union]["discriminator"]["propertyName"] == "game"
    assert SCHEMAS[union]["discriminator"]["mapping"] == {
        game: f"#/components/schemas/{title_of(game)}{union}" for game in GAMES
    }
    for game in GAMES:
        properties = SCHEMAS[f"{title_of(game)}{union}"]["properties"]
        assert properties["game"]["const"] == game
        if "view" in properties:
            assert properties["view"]["$ref"].endswith(f"/{title_of(game)}View")
            assert properties["moves"]["items"]["$ref"].endswith(f"/{title_of(game)}LegalMove")
        else:
            assert properties["rules"]["$ref"].endswith(f"/{title_of(game)}Rules")


@pytest.mark.parametrize("game", GAMES)
def test_every_object_a_game_declares_is_closed(game):
    title = title_of(game)

    def objects(shape):
        if isinstance(shape, dict):
            if shape.get("type") == "object":
                yield shape
            for value in shape.values():
                yield from objects(value)
        elif isinstance(shape, list):
            for item in shape:
                yield from objects(item)

    found = [shape for name, c in SCHEMAS.items() if name.startswith(title) for shape in objects(c)]
    assert found
    for shape in found:
        assert shape.get("additionalProperties") is False, shape


@pytest.mark.parametrize("game", GAMES)
def test_session_seats_are_bounded_and_need_a_human_and_levels_for_bots(game):
    seats = SCHEMAS[f"{title_of(game)}CreateSessionRequest"]["properties"]["seats"]
    counts = get_game(game).catalogue()["seats"]
    assert (seats["minItems"], seats["maxItems"]) == (min(counts), max(counts))
    request = {
        "type": "object",
        "properties": {"seats": seats},
        "components": {"schemas": SCHEMAS},
    }
    checker = jsonschema_rs.Draft202012Validator(request)
    human, bot = {"type": "human"}, {"type": "bot", "level": "greedy"}

    def seated(*first: dict) -> dict:
        """These seats first, then humans up to the game's fewest seats."""
        return {"seats": [*first, *[human] * (max(min(counts), 2) - len(first))]}

    assert checker.is_valid(seated(human, bot)) == (max(counts) >= 2)
    assert not checker.is_valid({"seats": [bot] * min(counts)})
    assert not checker.is_valid(seated(human, {"type": "bot"}))
    assert not checker.is_valid(seated({"type": "human", "level": "expert"}, bot))
    assert not checker.is_valid({"seats": [human] * (max(counts) + 1)})


@pytest.mark.parametrize("game", GAMES)
def test_new_game_seats_are_the_counts_the_game_allows(game):
    seats = SCHEMAS[f"{title_of(game)}NewGameRequest"]["properties"]["seats"]
    assert seats["enum"] == get_game(game).catalogue()["seats"]


def test_cards_have_a_pattern():
    card = SCHEMAS["BasraMove"]["properties"]["card"]
    assert card["pattern"]
    checker = jsonschema_rs.Draft202012Validator(card)
    assert all(checker.is_valid(text) for text in ("7D", "TD", "10d", "as"))
    assert not any(checker.is_valid(text) for text in ("1D", "7X", "", "7DD"))


@pytest.mark.parametrize("game", GAMES)
def test_a_state_names_one_of_the_game_s_presets(game):
    preset = SCHEMAS[f"{title_of(game)}ResolvedRules"]["properties"]["preset"]
    assert preset["enum"] == sorted(get_game(game).catalogue()["presets"])


INT32_MAX = 2**31 - 1


def schemas(node: object, where: str = ""):
    """Every object in `node` (a part of the document), with where it is."""
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from schemas(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from schemas(value, f"{where}/{index}")


def test_an_integer_that_may_pass_32_bits_says_int64():
    """Typed generators (OpenAPI Generator's java and go, oapi-codegen) make an integer
    without a format a 32-bit one: one whose declared range passes that must say `int64`,
    or the generated client cannot send or read what the service takes (a version as
    `after` or Last-Event-ID may be up to 2**53 - 1)."""
    wide = [
        where
        for where, schema in schemas(DOCUMENT)
        if schema.get("type") == "integer"
        and schema.get("maximum", 0) > INT32_MAX
        and schema.get("format") != "int64"
    ]
    assert not wide, wide


def bare_objects(node: object) -> list[str]:
    """Where `node` has an object schema that declares nothing of what it holds."""
    said = ("properties", "additionalProperties", "patternProperties", "anyOf", "oneOf", "$ref")
    return [
        where
        for where, schema in schemas(node)
        if schema.get("type") == "object" and not any(key in schema for key in said)
    ]


def test_no_object_is_left_undeclared():
    """A bare `type: object` reads in typed clients as an object with nothing in it
    (openapi-typescript's Record<string, never>, orval's zod object that drops every key):
    a match record's rules and moves would come out empty."""
    assert not bare_objects(DOCUMENT), bare_objects(DOCUMENT)



def test_a_match_record_s_rules_and_moves_are_read_whole():
    """Any game's record has them: maps of any value (not an anyOf of the games' shapes,
    which generators without a discriminator read as the first game's, losing fields)."""
    rules = SCHEMAS["MatchRecord"]["properties"]["rules"]
    move = SCHEMAS["RecordMove"]["properties"]["move"]
    for shape in (rules, move):
        assert shape["type"] == "object" and shape["additionalProperties"] is True, shape


def union_members(shape: dict) -> list[dict]:
    return shape.get("oneOf", []) + shape.get("anyOf", [])


def test_no_union_has_a_union_among_its_members():
    """OpenAPI Generator takes the members of a union to be objects: a union of unions (the
    events of the long poll were an anyOf of each game's discriminated oneOf) made a go
    client that does not compile and a java client that rejected every event of a game
    but the first. A union lists the components themselves."""
    nested = [
        (where, member["$ref"])
        for where, schema in schemas(DOCUMENT)
        for member in union_members(schema)
        if "$ref" in member and union_members(SCHEMAS[member["$ref"].rsplit("/", 1)[1]])
    ]
    assert not nested, nested


def test_the_long_poll_s_events_have_one_member_per_type_that_reads_each_game_s():
    """Clients that tell an anyOf's members apart by `type` alone (OpenAPI Generator's java
    client, native) read one game's `capture` as the other game's, dropping its fields,
    while each game's event of a shared type was a member of its own."""
    members: dict[str, str] = {}
    for member in SCHEMAS["SessionEvents"]["items"]["anyOf"]:
        name = member["$ref"].rsplit("/", 1)[1]
        value = SCHEMAS[name]["properties"]["type"]["const"]
        assert value not in members, (value, members[value], name)
        members[value] = name
    types = set()
    for game in GAMES:
        union = SCHEMAS[f"{title_of(game)}SessionEvent"]["discriminator"]["mapping"]
        for value, target in union.items():
            types.add(value)
            own, chosen = SCHEMAS[target.rsplit("/", 1)[1]], SCHEMAS[members[value]]
            assert set(own["properties"]) <= set(chosen["properties"]), (value, game)
            assert set(chosen["required"]) <= set(own["required"]), (value, game)
    assert types == set(members)


def test_games_whose_events_of_one_type_differ_in_a_field_s_kind_keep_their_own():
    # A game never seen may name an event as another game does with a field of another
    # kind: the document is still built, each game's event a member of its own.
    def event(cards: dict) -> dict:
        return {"type": "object", "properties": {"type": {"const": "capture"}, "cards": cards},
                "required": ["type", "cards"]}  # fmt: skip

    listed = event({"type": "array", "items": {"type": "string"}})
    counted = event({"type": "integer", "minimum": 0})
    assert any_game_event("capture", {"A": listed, "B": counted}) is None
    merged = any_game_event("capture", {"A": listed, "B": event({**listed["properties"]["cards"],
                                                                  "maxItems": 4})})  # fmt: skip
    assert merged is not None and merged["required"] == ["type", "cards"]
