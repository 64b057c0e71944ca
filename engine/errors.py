"""The one error taxonomy of every game, and how its messages show values.

Every error names the offending field by its dotted JSON path (`move.card`, `state.hands.0`,
`rules.hand_size`) and says why in words; the kinds tell a caller what to do about it:

* `RulesError`: a rule option, preset or seat count the game does not allow;
* `StateError`: a state that is not self-consistent (post it as the server wrote it);
* `MoveError`, one of: `NotAMove` (the JSON names no move at all), `IllegalMove` (a move,
  but not a legal one in this state), `AmbiguousMove` (it names several legal moves; its
  `choices` list them);
* `TooLarge`: a request the game refuses for its size, not its content (an `any_family`
  table with too many legal moves to list);
* `UnknownGame`: a game name that is not registered.
"""

import json
from collections.abc import Iterable, Sequence


class GameError(ValueError):
    """Rejected input; `path` is the dotted JSON path of the field, `reason` says why in words
    for a person; `choices`, when given, are the values the field could have held instead
    (the legal captures of an ambiguous move, the known presets...), for programs."""

    def __init__(self, path: str, reason: str, choices: Sequence[object] | None = None) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.choices = None if choices is None else list(choices)


class RulesError(GameError):
    """Rule options that are unknown, of a value the option does not allow or impossible
    together; `path` is the option's name, `preset`, `rules` or `seats`."""


class StateError(GameError):
    """A state that is not self-consistent; `path` names the offending field."""


class MoveError(GameError):
    """A move the game refuses; `path` is under `move`. Raised as one of its kinds."""


class NotAMove(MoveError):
    """The JSON is not a move of this game: not an object, an unknown type, not a card."""


class IllegalMove(MoveError):
    """A well-formed move that is not legal in the state it was played on."""


class AmbiguousMove(MoveError):
    """A move that names more than one legal move; `choices` are the candidates."""


class TooLarge(GameError):
    """Refused for its size: what it asks would be unreasonably large to compute or list."""


class UnknownGame(GameError):
    """A game name that is not registered."""


def shown(value: object) -> str:
    """A value as it was sent (JSON), for a message: "lebanese", true, [1, 2], null."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def one_of(values: Iterable[object]) -> str:
    """`2 or 4`, `"sweep", "wild" or "plain"`: a choice in words."""
    words = [shown(value) for value in values]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
