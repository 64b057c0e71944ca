"""The kinds of problem, each described at its `type` URI (`/problems/<kind>`)."""

import flask
from marshmallow import Schema, fields

from service.errors import KINDS, PROBLEM_TYPES, Kind, Problem
from service.routes import Blueprint, answer

blp = Blueprint(
    "problems",
    __name__,
    url_prefix=PROBLEM_TYPES.rstrip("/"),
    description="The kinds of problem: every problem's `type` is the path of its kind here.",
)


class ProblemKindSchema(Schema):
    type = fields.String(required=True, metadata={"description": "the `type` of its problems"})
    status = fields.Integer(required=True)
    title = fields.String(required=True)
    meaning = fields.String(required=True, metadata={"description": "when it is answered"})
    advice = fields.String(required=True, metadata={"description": "what a client should do"})


class ProblemKindsSchema(Schema):
    kinds = fields.List(fields.Nested(ProblemKindSchema), required=True)


def described(kind: Kind) -> dict[str, object]:
    return {
        "type": kind.type,
        "status": kind.status,
        "title": kind.title,
        "meaning": kind.meaning,
        "advice": kind.advice,
    }


@blp.route("")
@blp.response(200, ProblemKindsSchema)
@blp.doc(operationId="listProblemKinds")
def listed() -> flask.Response:
    """Every kind of problem the service answers."""
    return answer({"kinds": [described(kind) for kind in KINDS.values()]})


@blp.route("/<name>")
@blp.response(200, ProblemKindSchema)
@blp.alt_response(404, response="PROBLEM")
@blp.doc(operationId="getProblemKind")
def one(name: str) -> flask.Response:
    """One kind of problem: its status, what it means and what a client should do."""
    kind = KINDS.get(name)
    if kind is None:
        raise Problem(404, f"there is no kind of problem {name!r}; GET {blp.url_prefix} lists them")
    return answer(described(kind))
