"""Reading what a caller says about a game — new-game options, a seed, a state, a move, a
seat — in the one way both the stateless routes and hosted sessions use, so that the same
input is the same answer (or the same 422, naming the same field) on both paths."""

import secrets
from collections.abc import Mapping
from typing import Any

from engine.errors import GameError, RulesError, StateError, one_of, shown
from engine.game import Game
from engine.shapes import MAX_SEED_LENGTH
from service.errors import KINDS, Unprocessable, invalid, rejected
from service.schemas.derived import move_errors, never_empty

SEED_BYTES = 16
# Digits a caller's whole number may have: more than any size, version or time in ms here.
MAX_DIGITS = 18


def decimal(text: str) -> int | None:
    """`text` as a whole number when it is plain ASCII digits, at most MAX_DIGITS of them;
    None otherwise. `str.isdigit` alone also takes `²`, which `int` refuses, other scripts'
    digits, which `int` reads, and any length, which `int` refuses past 4,300 digits."""
    if text.isascii() and text.isdigit() and len(text) <= MAX_DIGITS:
        return int(text)
    return None


def under(prefix: str, path: str) -> str:
    """`path` as a JSON path below `prefix` (unless it is already there)."""
    return path if path == prefix or path.startswith(f"{prefix}.") else f"{prefix}.{path}"


def rules_path(path: str) -> str:
    """Rule errors name an option; `seats` is the request's own field."""
    return path if path == "seats" else under("rules", path)


def seed(body: Mapping[str, Any]) -> str:
    """A given seed is used as given, the empty string included; without one, a random one."""
    return body["seed"] if "seed" in body else secrets.token_hex(SEED_BYTES)


def default_rules(game: Game) -> dict[str, Any]:
    """The game's default preset, from its catalogue."""
    return {"preset": game.catalogue()["default_preset"]}


def default_seats(game: Game) -> int:
    """The fewest seats the game allows."""
    return min(game.catalogue()["seats"])


def given(game: Game, rules: Mapping[str, Any]) -> Mapping[str, Any]:
    """`rules` without the list options given empty that cannot be empty, which read as left
    out: OpenAPI Generator's java clients write a list left unset as [] (openapi.yaml's rules
    say so). An option that may be empty keeps its []: then it means something."""
    if not isinstance(rules, Mapping):
        return rules  # the game says what is wrong with it
    return {option: value for option, value in rules.items()
            if value != [] or not never_empty(game.shapes.options.get(option, {}))}  # fmt: skip


def check_preset(game: Game, rules: object, path: str) -> None:
    """A 422 naming `<path>.preset` when the rules name their preset by anything but a
    string. The field is the service's own (every game's rules request declares it a
    string, service.schemas.derived.rules_request): a game that looks a list or an object
    up among its presets (`name not in PRESETS`, as the example Tricks does) raised
    TypeError, a 500."""
    if type(rules) is dict and "preset" in rules and type(rules["preset"]) is not str:
        presets = sorted(game.catalogue()["presets"])
        reason = f"unknown preset {shown(rules['preset'])}; choose {one_of(presets)}"
        raise rejected(f"{path}.preset", RulesError("preset", reason, presets))


def new_state(game: Game, rules: Mapping[str, Any] | None, seats: int, seed: str) -> Any:
    """A fresh match; a bad option or seat count is a 422 naming `rules.<option>` or `seats`."""
    check_preset(game, rules, "rules")
    try:
        return game.new(given(game, rules) if rules else default_rules(game), seats, seed)
    except GameError as error:
        raise rejected(rules_path(error.path), error) from error


def read_state(game: Game, data: object) -> Any:
    """The state from its JSON; a 422 naming the field under `state` when it is not one. A
    state's `seed` (what later deals derive from, as every game's state carries it) is
    bounded as every seed the service takes, whether or not the game reads it with
    `engine.fields.seed`."""
    if type(data) is dict:
        check_preset(game, data.get("rules"), "state.rules")
    seed = data.get("seed") if type(data) is dict else None
    if type(seed) is str and len(seed) > MAX_SEED_LENGTH:
        raise rejected(
            "state.seed", StateError("seed", f"must be at most {MAX_SEED_LENGTH} characters")
        )
    try:
        return game.read(data)
    except GameError as error:
        raise rejected(under("state", error.path), error) from error


def check_move(game: Game, data: object) -> None:
    """A 422 naming the field under `move` when `data` has not the shape the game declares
    for a move."""
    errors = move_errors(game, data)
    if errors:
        raise Unprocessable(
            {under("move", path) if path else "move": why for path, why in errors.items()},
            kind=KINDS["not-a-move"],
        )


def legal_move(game: Game, state: Any, data: object) -> Any:
    """The legal move a move of the declared shape names, read whole by the game. The game's
    errors about the move are named under `move`; an error it meets in the state (e.g. too
    many captures to list) is named under `state`."""
    try:
        return game.read_move(state, data)
    except GameError as error:
        prefix = "move" if error.path.startswith("move") else "state"
        raise rejected(under(prefix, error.path), error) from error


def read_move(game: Game, state: Any, data: object) -> Any:
    """The legal move `data` names: its declared shape's checks, then the game's."""
    check_move(game, data)
    return legal_move(game, state, data)


def check_seat(game: Game, state: Any, seat: int) -> int:
    """`seat` when the state has it, else a 422 naming `seat`."""
    seats = game.seats(state)
    if not 0 <= seat < seats:
        raise invalid("seat", f"must be a seat below {seats}, got {seat}")
    return seat
