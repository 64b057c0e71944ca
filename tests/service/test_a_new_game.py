"""A new game is one package and nothing else: Tricks (tests/games/tricks, the game that
docs/adding-a-game.md walks through) is found by the registry as `engine.tricks`, then
listed, played statelessly, documented with typed shapes and hosted against every bot
level, every answer conforming to the document the service serves."""

from copy import copy
from dataclasses import replace

import jsonschema_rs
import pytest
import yaml

from engine import game as registry
from engine import shapes
from engine.bots import LEVELS
from engine.game import get_game
from engine.shapes import obj
from service import create_app
from tests.service.new_game import tricks_registered


@pytest.fixture
def client():
    """An app built once `engine/` also holds the Tricks package."""
    with tricks_registered():
        yield create_app({"REDIS_URL": None, "LONG_POLL_SECONDS": 0.0}).test_client()


def served(client) -> dict:
    """The openapi.yaml this app serves, read once per app."""
    if not hasattr(client.application, "document"):
        text = client.get("/openapi.yaml").get_data(as_text=True)
        client.application.document = yaml.load(text, Loader=yaml.CSafeLoader)
        client.application.validators = {}
    return client.application.document


def conform(client, answer, component: str):
    """The answer is a 2xx and matches `component` of the served openapi.yaml."""
    assert answer.status_code < 300, answer.get_json()
    document, validators = served(client), client.application.validators
    if component not in validators:
        schema = {"$ref": f"#/components/schemas/{component}", **document}
        validators[component] = jsonschema_rs.Draft202012Validator(schema)
    validators[component].validate(answer.get_json())
    return answer.get_json()


def test_the_catalogue_lists_it_with_its_options(client):
    games = conform(client, client.get("/v1/games"), "CatalogueResponse")["games"]
    tricks = next(game for game in games if game["name"] == "tricks")
    assert tricks["seats"] == [2, 3, 4]
    assert tricks["options"] == {"trick_points": 1, "last_trick_bonus": 0}
    assert set(tricks["presets"]) == {"plain", "bonus"}


def test_the_play_page_links_its_rules_from_its_own_package(client):
    rules = client.get("/play/rules/tricks")
    assert rules.status_code == 200, rules.status_code
    assert rules.get_data(as_text=True).startswith("# Tricks")
    assert rules.headers["Content-Type"] == "text/plain; charset=utf-8"


def test_its_shapes_are_typed_in_the_document(client):
    document = served(client)
    schemas = document["components"]["schemas"]
    options = schemas["TricksRules"]["properties"]
    assert options["last_trick_bonus"]["enum"] == [0, 5, 10]
    assert (options["trick_points"]["minimum"], options["trick_points"]["maximum"]) == (1, 10)
    assert schemas["TricksState"]["additionalProperties"] is False
    assert schemas["TricksView"]["properties"]["game"]["const"] == "tricks"
    mapping = schemas["SessionResponse"]["discriminator"]["mapping"]
    assert mapping["tricks"] == "#/components/schemas/TricksSessionResponse"
    events = schemas["TricksEvent"]["discriminator"]["mapping"]
    assert set(events) == {"play", "trick", "match_end"}
    for action in ("new", "legal-moves", "apply", "score", "view", "hint"):
        assert f"/v1/games/tricks/{action}" in document["paths"]


def test_it_is_played_statelessly_to_the_end(client):
    new = client.post("/v1/games/tricks/new", json={"seats": 3, "seed": "t", "rules": {
        "preset": "bonus"}})  # fmt: skip
    state = conform(client, new, "TricksStateResponse")["state"]
    for level in LEVELS:
        hint = client.post("/v1/games/tricks/hint", json={"state": state, "level": level})
        conform(client, hint, "TricksHintResponse")
    while state["turn"] is not None:
        moves = client.post("/v1/games/tricks/legal-moves", json={"state": state})
        move = conform(client, moves, "TricksLegalMovesResponse")["moves"][0]
        applied = client.post("/v1/games/tricks/apply", json={"state": state, "move": move})
        state = conform(client, applied, "TricksApplyResponse")["state"]
    sides = conform(client, client.post("/v1/games/tricks/score", json={"state": state}),
                    "TricksScoreResponse")["sides"]  # fmt: skip
    assert sum(side["tricks"] for side in sides) == 8
    assert sum(side["total"] for side in sides) == 8 + 10
    view = client.post("/v1/games/tricks/view", json={"state": state, "seat": 1})
    assert "hands" not in conform(client, view, "TricksViewResponse")["view"]


def test_bad_input_is_refused_naming_the_field(client):
    bad_rules = client.post("/v1/games/tricks/new", json={"rules": {"last_trick_bonus": 7}})
    assert (
        bad_rules.status_code == 422 and "rules.last_trick_bonus" in bad_rules.get_json()["errors"]
    )
    state = client.post("/v1/games/tricks/new", json={"seed": "t"}).get_json()["state"]
    for move, path in (({"card": "zz"}, "move.card"), ({"card": "9C", "x": 1}, "move.x")):
        bad = client.post("/v1/games/tricks/apply", json={"state": state, "move": move})
        assert bad.status_code == 422 and path in bad.get_json()["errors"], bad.get_json()
    hands = state["hands"]  # a card won alone: no trick of two
    broken = {**state, "won": [hands[0][:1], []], "hands": [hands[0][1:], hands[1]]}
    bad_state = client.post("/v1/games/tricks/score", json={"state": broken})
    assert bad_state.status_code == 422 and "state.won.0" in bad_state.get_json()["errors"]


@pytest.mark.parametrize("level", LEVELS)
def test_a_hosted_session_is_played_against_each_bot_level(client, level):
    seats = [{"type": "human"}, {"type": "bot", "level": level}, {"type": "bot", "level": level}]
    created = client.post("/v1/sessions", json={"game": "tricks", "seats": seats, "spectators": 1})
    created = conform(client, created, "CreateSessionResponse")
    session, token = created["id"], created["seats"][0]["token"]
    me = {"Authorization": f"Bearer {token}"}
    watcher = {"Authorization": f"Bearer {created['spectators'][0]['token']}"}
    read = conform(client, client.get(f"/v1/sessions/{session}", headers=me), "SessionResponse")
    assert read["game"] == "tricks"
    while read["view"]["status"] == "playing":
        if not read["moves"]:  # a bounded step of bot play left more: read again
            read = conform(client, client.get(f"/v1/sessions/{session}", headers=me),
                           "SessionResponse")  # fmt: skip
            continue
        body = {"move": read["moves"][0], "version": read["version"]}
        moved = client.post(f"/v1/sessions/{session}/moves", json=body, headers=me)
        conform(client, moved, "SessionMoveResponse")
        read = conform(client, client.get(f"/v1/sessions/{session}", headers=me), "SessionResponse")
    events = client.get(f"/v1/sessions/{session}/events?after=0", headers=watcher)
    history = conform(client, events, "SessionEvents")
    assert history[-1]["type"] == "match_end"
    assert sum(event["type"] == "trick" for event in history) == 8
    spectator = client.get(f"/v1/sessions/{session}", headers=watcher)
    assert "hand" not in conform(client, spectator, "SessionResponse")["view"]


def test_a_game_registered_again_under_its_name_is_served_as_it_now_is(monkeypatch):
    """What the service derives from a game (its move check, its envelopes) is kept by the
    game, not by its name: another package registered under the same name (one unseen game
    mounted after another) is checked and documented by its own shapes and seats."""
    with tricks_registered():
        first = create_app({"REDIS_URL": None}).test_client()
        state = first.post("/v1/games/tricks/new", json={"seed": "t"}).get_json()["state"]
        card = first.post("/v1/games/tricks/legal-moves", json={"state": state}).get_json()
        move = {**card["moves"][0], "face_down": True}
        refused = first.post("/v1/games/tricks/apply", json={"state": state, "move": move})
        assert refused.status_code == 422 and "move.face_down" in refused.get_json()["errors"]
    with tricks_registered():
        again = type(get_game("tricks"))
        laid = obj({"card": shapes.card(), "face_down": shapes.boolean()}, optional=("face_down",))
        monkeypatch.setattr(again, "shapes", replace(again.shapes, move=laid))
        monkeypatch.setattr(again, "seat_counts", (2, 3))
        second = create_app({"REDIS_URL": None}).test_client()
        taken = second.post("/v1/games/tricks/apply", json={"state": state, "move": move})
        assert taken.status_code == 200, taken.get_json()
        request = served(second)["components"]["schemas"]["TricksNewGameRequest"]
        assert request["properties"]["seats"]["enum"] == [2, 3]


def test_a_game_named_so_that_a_component_of_it_takes_a_service_name_is_refused():
    """A game's components are named after it (`RecordMove` for a game `record`): one
    that takes the name of a component of the service's own (a match record's
    `RecordMove`) must stop the app, not rename the service's (to `RecordMove1`, which
    changes every other game's generated clients)."""
    with tricks_registered(), pytest.MonkeyPatch.context() as patch:
        record = copy(get_game("tricks"))
        record.name = "record"
        patch.setitem(registry._GAMES, "record", record)
        with pytest.raises(RuntimeError, match="RecordMove"):
            create_app({"REDIS_URL": None})


@pytest.mark.parametrize("game", sorted({*registry.games(), "tricks"}))
def test_its_view_has_what_the_play_page_reads(client, game):
    """The play page's shell reads `turn`, `status`, `scores` (one per side) and
    `hand_sizes` (one per seat) of any game's view (docs/adding-a-game.md): a view without
    `scores` stopped it drawing the board at the first view, as Tricks' did."""
    state = client.post(f"/v1/games/{game}/new", json={"seed": "page"}).get_json()["state"]
    view = client.post(f"/v1/games/{game}/view", json={"state": state, "seat": 0}).get_json()
    view = view["view"]
    assert {"turn", "status", "scores", "hand_sizes"} <= set(view), sorted(view)
    assert 1 <= len(view["scores"]) <= view["seats"] == len(view["hand_sizes"])


def test_a_game_seating_more_than_the_others_gets_a_creation_link_per_seat():
    """The creation's links read each seat's token (`ReadSessionAsSeat<n>`), one per seat
    up to the most any game allows: counted when an app is made, not when the routes were
    imported, before a game seating six was mounted."""
    with tricks_registered(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(type(get_game("tricks")), "seat_counts", (2, 3, 4, 6))
        links = served(create_app({"REDIS_URL": None}).test_client())["paths"]["/v1/sessions"]
        links = links["post"]["responses"]["201"]["links"]
        assert {f"ReadSessionAsSeat{seat}" for seat in range(6)} <= set(links), sorted(links)


def test_a_state_s_seed_is_bounded_even_when_the_game_reads_any_string(client):
    """Every seed the service takes is at most 128 characters, a posted state's too (what
    later deals derive from): Tricks reads its state's seed as any string, as a new game may;
    the service refuses the long one naming `state.seed`, and documents the bound."""
    state = client.post("/v1/games/tricks/new", json={"seed": "s" * 128}).get_json()["state"]
    for action, body in (("legal-moves", {}), ("score", {}), ("view", {"seat": 0})):
        answer = client.post(
            f"/v1/games/tricks/{action}", json={"state": {**state, "seed": "s" * 129}, **body}
        )
        assert answer.status_code == 422 and list(answer.get_json()["errors"]) == ["state.seed"]
    seed = served(client)["components"]["schemas"]["TricksState"]["properties"]["seed"]
    assert seed["maxLength"] == 128


@pytest.mark.parametrize("preset", [[], {}, ["plain"]])
def test_a_preset_named_by_a_list_or_an_object_is_a_422_naming_it(client, preset):
    """`preset` is the service's own field of every game's rules (a string): a game that
    looks it up among its presets as it comes (`name not in PRESETS`, as Tricks does) met
    an unhashable list or object and raised TypeError, a 500."""
    state = client.post("/v1/games/tricks/new", json={"seed": "p"}).get_json()["state"]
    posted = {**state, "rules": {**state["rules"], "preset": preset}}
    seats = [{"type": "human"}, {"type": "human"}]
    for path, body, named in (
        ("/v1/games/tricks/new", {"rules": {"preset": preset}}, "rules.preset"),
        ("/v1/games/tricks/legal-moves", {"state": posted}, "state.rules.preset"),
        ("/v1/sessions", {"game": "tricks", "seats": seats, "rules": {"preset": preset}},
         "rules.preset"),
    ):  # fmt: skip
        answer = client.post(path, json=body)
        assert answer.status_code == 422, (path, answer.status_code)
        assert list(answer.get_json()["errors"]) == [named], answer.get_json()
