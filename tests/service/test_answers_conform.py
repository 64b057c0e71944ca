"""Whole matches of every registered game, stateless and hosted: every answer validates
against the schema openapi.yaml documents for it. (The schemathesis runs send generated
bodies, which seldom reach deep positions: a deal's end, a capture, a finished match.)"""

import random
from functools import cache
from typing import Any

import jsonschema_rs
import pytest
import yaml

from engine.game import games
from tests.service.openapi_conformance import OPENAPI

# Short matches: a few deals or rounds each, for a game with a target score (another game
# plays its default rules).
SHORT = {"target_score": 30}


def short(name: str) -> dict:
    return SHORT if "target_score" in games()[name].shapes.options else {}


@cache
def document() -> dict[str, Any]:
    return yaml.safe_load(OPENAPI.read_text())


@cache
def validator(path: str, method: str = "post", status: str = "200") -> Any:
    """The validator of the JSON answer documented for `method path` with `status`."""
    answer = document()["paths"][path][method]["responses"][status]
    schema = answer["content"]["application/json"]["schema"]
    return jsonschema_rs.Draft202012Validator(
        {**schema, "components": document()["components"]}, validate_formats=True
    )


def conforms(response, path: str, method: str = "post", status: int = 200) -> Any:
    assert response.status_code == status, response.get_json()
    body = response.get_json()
    errors = [error.message for error in validator(path, method, str(status)).iter_errors(body)]
    assert not errors, (path, errors[:3])
    return body


@pytest.mark.parametrize("name", list(games()))
def test_every_stateless_answer_of_whole_matches_is_as_documented(client, name):
    base = f"/v1/games/{name}"
    rng = random.Random(name)
    conforms(client.get("/v1/games"), "/v1/games", "get")
    for seats in games()[name].catalogue()["seats"]:
        body = {"seed": f"{name}-{seats}", "seats": seats, "rules": short(name)}
        state = conforms(client.post(f"{base}/new", json=body), f"{base}/new")["state"]
        while state["status"] != "match_over":
            moves = conforms(
                client.post(f"{base}/legal-moves", json={"state": state}), f"{base}/legal-moves"
            )["moves"]
            applied = client.post(f"{base}/apply", json={"state": state, "move": rng.choice(moves)})
            state = conforms(applied, f"{base}/apply")["state"]
            seat = rng.randrange(seats)
            view = client.post(f"{base}/view", json={"state": state, "seat": seat})
            conforms(view, f"{base}/view")
            conforms(client.post(f"{base}/score", json={"state": state}), f"{base}/score")
        assert client.post(f"{base}/legal-moves", json={"state": state}).get_json()["moves"] == []


@pytest.mark.parametrize("name", list(games()))
def test_every_hosted_answer_of_a_whole_match_is_as_documented(client, name):
    seats = [{"type": "human"}] + [{"type": "bot", "level": "random"}] * (
        max(games()[name].catalogue()["seats"]) - 1
    )
    body = {"game": name, "seats": seats, "rules": short(name), "seed": name}
    created = conforms(client.post("/v1/sessions", json=body), "/v1/sessions", status=201)
    url = f"/v1/sessions/{created['id']}"
    auth = {"Authorization": f"Bearer {created['seats'][0]['token']}"}
    rng = random.Random(name)
    while True:
        read = conforms(client.get(url, headers=auth), "/v1/sessions/{session_id}", "get")
        if read["view"]["status"] == "match_over":
            break
        if not read["moves"]:
            continue  # a bounded step of bot play left more: this read resumed it
        move = {"move": rng.choice(read["moves"]), "version": read["version"]}
        answer = client.post(f"{url}/moves", json=move, headers=auth)
        conforms(answer, "/v1/sessions/{session_id}/moves")
    events = client.get(f"{url}/events", query_string={"after": 0}, headers=auth)
    assert conforms(events, "/v1/sessions/{session_id}/events", "get")
