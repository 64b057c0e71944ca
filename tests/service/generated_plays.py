"""Whole matches played through a generated client (tests/service/generated_clients.py):
every answer must be read into the generated models only and written back by them to
exactly the JSON the server sent; every request body is built by the generated models from
what earlier answers' models hold."""

import requests

from service.schemas.derived import title_of
from tests.service.generated_clients import Answer, Driver, no_raw_dicts, plain, unwrapped

SESSION = "/v1/sessions/{session_id}"


def read(answer: Answer, status: int = 200):
    """The answer has `status`, was read into generated models only, and they write back
    exactly what the server sent: the model, unwrapped from any union wrapper."""
    assert answer.status == status, (answer.status, answer.sent)
    no_raw_dicts(answer.model)
    assert plain(answer.model) == answer.sent
    return unwrapped(answer.model)


def catalogue_of(driver: Driver, game: str) -> dict:
    """The game's entry of GET /v1/games."""
    answer = read(driver.call("get", "/v1/games"))
    return next(entry for entry in plain(answer)["games"] if entry["name"] == game)


def short_rules(catalogue: dict) -> dict:
    """The default preset, its match shortened where the game has a target score."""
    return {"target_score": 1} if "target_score" in catalogue["options"] else {}


def seats_of(catalogue: dict) -> list[dict]:
    """As few seats as the game allows: a bot at seat 0 (it moves first), a human at seat 1,
    bots after; a game played alone has its one seat human."""
    fewest = min(catalogue["seats"])
    human = min(1, fewest - 1)
    return [
        {"type": "human"} if seat == human else {"type": "bot", "level": "random"}
        for seat in range(fewest)
    ]


def stateless_match(driver: Driver, game: str) -> None:
    """A new game, a hint at every level, then legal moves, a view and the first legal move
    applied until the match is over, and its score."""
    catalogue = catalogue_of(driver, game)
    seats = min(catalogue["seats"])
    body = {"seed": "generated", "seats": seats, "rules": short_rules(catalogue)}
    path = f"/v1/games/{game}"
    state = read(driver.call("post", f"{path}/new", body=body)).state
    for level in ("random", "greedy", "expert"):
        asked = {"state": plain(state), "level": level}
        hint = read(driver.call("post", f"{path}/hint", body=asked))
        assert plain(hint.move) in [plain(item.move) for item in hint.alternatives]
    moves = 0
    while state.turn is not None:
        asked = {"state": plain(state)}
        legal = read(driver.call("post", f"{path}/legal-moves", body=asked)).moves
        assert legal
        view = read(driver.call("post", f"{path}/view", body={**asked, "seat": state.turn}))
        assert view.view.seat == state.turn
        move = {**asked, "move": plain(legal[0])}
        applied = read(driver.call("post", f"{path}/apply", body=move))
        assert applied.events
        state = applied.state
        moves += 1
    assert state.status == "match_over" and moves > seats
    assert read(driver.call("post", f"{path}/score", body={"state": plain(state)})).sides


def hosted_match(driver: Driver, base: str, game: str) -> None:
    """A session with a bot at seat 0, a human and a spectator: the human plays its first
    legal move until the match is over (one stale move on the way: a 409), then the events
    as the seat and the spectator see them, the spectator's read, a new spectator token,
    the event stream from the start, the end of the session and its 404."""
    catalogue = catalogue_of(driver, game)
    body = {
        "game": game,
        "rules": short_rules(catalogue),
        "seats": seats_of(catalogue),
        "spectators": 1,
        "seed": "generated",
    }
    model = f"{title_of(game)}CreateSessionRequest"
    created = read(driver.call("post", "/v1/sessions", body=body, model=model), 201)
    token = next(seat.token for seat in created.seats if plain(seat)["type"] == "human")
    watcher = created.spectators[0].token
    where = {"session_id": created.id}
    seen = read(driver.call("get", SESSION, token=token, **where))
    moved = 0
    while seen.view.status == "playing":
        if not seen.moves:  # a bounded step of bot play left more: read again
            seen = read(driver.call("get", SESSION, token=token, **where))
            continue
        move = {"move": plain(seen.moves[0]), "version": seen.version}
        answer = read(driver.call("post", f"{SESSION}/moves", body=move, token=token, **where))
        assert answer.events and answer.version > seen.version
        if moved == 0:  # the same version again: a 409 naming the current one
            again = driver.call("post", f"{SESSION}/moves", body=move, token=token, **where)
            assert read(again, 409).version == answer.version
        moved += 1
        seen = read(driver.call("get", SESSION, token=token, **where))
    assert moved and seen.version > created.version
    for reader in (token, watcher):
        events = driver.call("get", f"{SESSION}/events", token=reader, after=0, **where)
        history = plain(read(events))
        assert history[-1]["type"] == "match_end" and history[-1]["version"] == seen.version
    watched = read(driver.call("get", SESSION, token=watcher, **where))
    assert watched.seat is None and watched.moves == []
    read(driver.call("post", f"{SESSION}/spectators", token=token, **where), 201)
    streamed = streamed_versions(base, created.id, watcher, seen.version)
    assert streamed == list(range(1, seen.version + 1))
    assert driver.call("delete", SESSION, token=token, **where).status == 204
    read(driver.call("get", SESSION, token=token, **where), 404)


def streamed_versions(base: str, session: str, token: str, last: int) -> list[int]:
    """The versions the event stream sends from the start, up to `last` (the generated
    clients read no event stream: its data is the long poll's, read above)."""
    versions: list[int] = []
    with requests.get(
        f"{base}/v1/sessions/{session}/stream", params={"after": 0},
        headers={"Authorization": f"Bearer {token}"}, stream=True, timeout=30,
    ) as stream:  # fmt: skip
        for line in stream.iter_lines(decode_unicode=True):
            if line.startswith("id: "):
                versions.append(int(line.removeprefix("id: ")))
                if versions[-1] == last:
                    break
    return versions


def created_without_rules(driver: Driver, game: str) -> None:
    """Creations without rules and with the default preset: the request union tells the
    games apart by `game` alone."""
    catalogue = catalogue_of(driver, game)
    model = f"{title_of(game)}CreateSessionRequest"
    for rules in ({}, {"rules": {"preset": catalogue["default_preset"]}}):
        body = {"game": game, "seats": seats_of(catalogue), **rules}
        created = read(driver.call("post", "/v1/sessions", body=body, model=model), 201)
        assert created.game == game
