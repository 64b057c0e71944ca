"""openapi.yaml types every payload by name, precisely enough for a strict typed client:
every field a view carries is declared, rules list their options, events and views are
unions told apart by an explicit mapping, and requests say what the service accepts."""

import jsonschema_rs
import pytest
import yaml

from engine.game import games, get_game
from service import create_app
from service.schemas.common import title_of
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
    assert declared["game"]["enum"] == [game]
    assert declared["status"]["enum"] == ["playing", "match_over"]
    validate(view, f"{title_of(game)}View")


def test_a_session_view_is_told_apart_by_its_game():
    view = SCHEMAS["SessionResponse"]["properties"]["view"]
    assert view["discriminator"]["propertyName"] == "game"
    assert view["discriminator"]["mapping"] == {
        game: f"#/components/schemas/{title_of(game)}View" for game in GAMES
    }


def test_session_seats_are_bounded_and_need_a_human_and_levels_for_bots():
    seats = SCHEMAS["CreateSessionRequest"]["properties"]["seats"]
    counts = {count for game in GAMES for count in get_game(game).catalogue()["seats"]}
    assert (seats["minItems"], seats["maxItems"]) == (min(counts), max(counts))
    request = {
        "type": "object",
        "properties": {"seats": seats},
        "components": {"schemas": SCHEMAS},
    }
    checker = jsonschema_rs.Draft202012Validator(request)
    human, bot = {"type": "human"}, {"type": "bot", "level": "greedy"}
    assert checker.is_valid({"seats": [human, bot]})
    assert not checker.is_valid({"seats": [bot, bot]})
    assert not checker.is_valid({"seats": [human, {"type": "bot"}]})
    assert not checker.is_valid({"seats": [{"type": "human", "level": "expert"}, bot]})
    assert not checker.is_valid({"seats": [human]})


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
