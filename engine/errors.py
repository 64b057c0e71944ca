"""The one error type games raise for input they reject, and how its messages show values."""

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
