"""The links of openapi.yaml lead a stateful fuzzer from a creation to a played move: read
the session with a human seat's token (seat 0 is a bot here), move with the move and the
version that read listed, then the next move from the move's answer. Followed here by hand,
with each link's runtime expressions evaluated against the real answers, for every game."""

import re
from typing import Any

import pytest
import yaml

from engine.game import games
from tests.service.openapi_conformance import OPENAPI

DOCUMENT = yaml.safe_load(OPENAPI.read_text())
SESSION = "/v1/sessions/{session_id}"


class Unresolved(LookupError):
    """The expression names what the answer does not hold (a bot seat's token)."""


def pointer(document: Any, path: str) -> Any:
    """RFC 6901: `/seats/1/token` in `document`."""
    for part in path.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        try:
            document = document[int(part) if isinstance(document, list) else part]
        except (KeyError, IndexError, ValueError) as missing:
            raise Unresolved(path) from missing
    return document


def evaluate(expression: str, request: dict, answer: Any) -> Any:
    """A link's runtime expression, or a string with {expressions} embedded in it."""
    if not expression.startswith("$"):
        return re.sub(r"{(\$[^}]+)}", lambda m: str(evaluate(m[1], request, answer)), expression)
    if expression.startswith("$response.body#"):
        return pointer(answer, expression.removeprefix("$response.body#"))
    if expression.startswith("$request.path."):
        return request["path"][expression.removeprefix("$request.path.")]
    if expression.startswith("$request.header."):
        return request["headers"][expression.removeprefix("$request.header.")]
    raise AssertionError(f"no such runtime expression here: {expression}")


def operation_of(link: dict) -> tuple[str, str]:
    """The (path, method) a link's operationRef names in the document."""
    reference = link["operationRef"].removeprefix("#/paths/")
    path, method = reference.rsplit("/", 1)
    path = path.replace("~1", "/").replace("~0", "~")
    assert method in DOCUMENT["paths"][path], link
    return path, method


def follow(client, link: dict, request: dict, answer: Any):
    """The call the link describes, after the call `request` that answered `answer`; None
    when the answer does not hold what the link needs."""
    path, method = operation_of(link)
    call: dict = {"path": {}, "headers": {}, "query": {}, "body": None}
    try:
        for name, expression in link["parameters"].items():
            where, field = name.split(".", 1)
            value = evaluate(expression, request, answer)
            if where == "body":
                call["body"] = {**(call["body"] or {}), field: value}
            else:
                call["headers" if where == "header" else where][field] = value
    except Unresolved:
        return None
    url = path.format(**call["path"])
    response = client.open(
        url, method=method.upper(), headers=call["headers"], query_string=call["query"],
        json=call["body"],
    )  # fmt: skip
    return call, response


def links(path: str, method: str, status: int) -> dict:
    return DOCUMENT["paths"][path][method]["responses"][str(status)].get("links", {})


def test_every_link_names_an_operation_of_the_document():
    found = [
        link
        for methods in DOCUMENT["paths"].values()
        for operation in methods.values()
        if isinstance(operation, dict)
        for response in operation.get("responses", {}).values()
        for link in response.get("links", {}).values()
    ]
    assert len(found) > 5
    for link in found:
        operation_of(link)


@pytest.mark.parametrize("game", sorted(games()))
def test_the_links_lead_from_a_creation_to_played_moves(client, game):
    fewest = min(games()[game].catalogue()["seats"])
    if fewest < 2:
        fewest = min(count for count in games()[game].catalogue()["seats"] if count >= 2)
    bot = {"type": "bot", "level": "random"}
    seats = [bot, {"type": "human"}, *[bot] * (fewest - 2)]  # seat 1 the one human
    body = {"game": game, "seats": seats, "spectators": 1}
    created = client.post("/v1/sessions", json=body)
    assert created.status_code == 201, created.get_json()
    creation = {"path": {}, "headers": {}}
    reads = []
    for name, link in links("/v1/sessions", "post", 201).items():
        followed = follow(client, link, creation, created.get_json())
        if followed is None:  # seat 0 is a bot (no token), seats past the game's count
            continue
        call, response = followed
        assert response.status_code == 200, (name, response.get_json())
        reads.append((name, call, response.get_json()))
    assert {name for name, _, _ in reads} == {"ReadSessionAsSeat1", "ReadSessionAsSpectator"}
    _, call, read = next(item for item in reads if item[0] == "ReadSessionAsSeat1")
    assert read["moves"], "the human seat is to move once the bot has"
    followed = follow(client, links(SESSION, "get", 200)["PlayMove"], call, read)
    assert followed is not None
    call, moved = followed
    assert moved.status_code == 200, moved.get_json()
    assert call["body"] == {"move": read["moves"][0], "version": read["version"]}
    for name in ("ReadEvents", "AddSpectator"):
        _, response = follow(client, links(SESSION, "get", 200)[name], call, read)
        assert response.status_code in (200, 201), (name, response.get_json())
    answer = moved.get_json()
    if answer["moves"]:
        _, again = follow(
            client, links(f"{SESSION}/moves", "post", 200)["PlayNextMove"], call, answer
        )
        assert again.status_code == 200, again.get_json()
    _, reread = follow(client, links(f"{SESSION}/moves", "post", 200)["ReadSession"], call, answer)
    assert reread.status_code == 200
    _, ended = follow(client, links(SESSION, "get", 200)["EndSession"], call, read)
    assert ended.status_code == 204
