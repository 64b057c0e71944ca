"""The one error type games raise for input they reject."""


class GameError(ValueError):
    """Rejected input; `path` is the dotted JSON path of the field, `reason` says why."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
