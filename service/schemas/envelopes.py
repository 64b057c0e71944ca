"""The shared envelopes: the request and answer shapes around any game's state and moves,
the catalogue, hints and hosted sessions.

Requests are loaded with marshmallow up to the envelope; a `state` stays a raw object that
the game's own reader checks in depth (precise and several times faster than marshmallow
on a full state). Answers are documented here and written by the game's writer. Each
game's envelopes are their own components (`BasraApplyRequest`, `BankApplyRequest`...)
referring to that game's schemas, so openapi.yaml says exactly what each game's paths take.
"""

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from engine.bots import LEVELS
from engine.game import Game, games, get_game
from engine.shapes import MAX_SEED_LENGTH
from service.errors import ProblemSchema
from service.hosted.records import DEFAULT_TIMEOUT_LEVEL, MAX_SPECTATORS
from service.hosted.webhooks import EVENTS as WEBHOOK_EVENTS
from service.schemas.derived import (
    TIMEOUT_EVENT,
    any_game_event,
    game_components,
    move_errors,
    ref,
    tagged_union,
    title_of,
)

# The metadata key of a field's JSON schema written as it is (see `written_as_is`).
JSON_SCHEMA = "json_schema"
# Hosted-session clients of v1 were written when Basra was the only game: they may omit it.
DEFAULT_GAME = "basra"


def shaped(shape: dict[str, Any], **kwargs: Any) -> fields.Raw:
    """A field documented by the JSON schema `shape` as it is (see `written_as_is`);
    marshmallow loads it as any value, the game checks it."""
    metadata = {JSON_SCHEMA: shape, **kwargs.pop("metadata", {})}
    return fields.Raw(metadata=metadata, **kwargs)


def written_as_is(converter: Any, field: fields.Field, **kwargs: Any) -> dict[str, Any]:
    """apispec passes on only the keywords it knows of a field's metadata; a `shaped` field's
    schema (a discriminator, `contains`...) goes into openapi.yaml whole. A callable gives
    it when the document is built (what depends on the games registered by then)."""
    shape = field.metadata.get(JSON_SCHEMA, {})
    return dict(shape() if callable(shape) else shape)


def schema_class(name: str, attributes: dict[str, Any], description: str = "") -> type[Schema]:
    """A schema class whose component is called `name`."""
    if description:
        attributes = {**attributes, "Meta": type("Meta", (), {"description": description})}
    return type(f"{name}Schema", (Schema,), attributes)


class RawObject(fields.Raw):
    """A JSON object kept as it is: marshmallow checks only that it is an object; the game
    checks the rest and names the bad field. `shape` documents it."""

    def __init__(self, shape: Any, what: str, **kwargs: Any) -> None:
        self.what = what
        metadata = kwargs.pop("metadata", {})
        description = metadata.pop("description", None)
        documented = {**shape, "description": description} if description else shape
        super().__init__(metadata={JSON_SCHEMA: documented, **metadata}, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> dict:
        if not isinstance(value, dict):
            raise ValidationError(f"must be an object ({self.what})")
        return value


class MoveField(fields.Raw):
    """A move of one game: checked against the shape the game declares for a move (the
    game then reads it whole), documented by it."""

    def __init__(self, game: str, **kwargs: Any) -> None:
        self.game = game
        shape = ref(f"{title_of(game)}Move")
        super().__init__(metadata={JSON_SCHEMA: shape, **kwargs.pop("metadata", {})}, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        errors = move_errors(get_game(self.game), value)
        if errors:
            raise ValidationError({path or "_schema": why for path, why in errors.items()})
        return value


def seed_field(what: str) -> fields.String:
    return fields.String(
        validate=validate.Length(max=MAX_SEED_LENGTH),
        metadata={
            "description": f"any string of at most {MAX_SEED_LENGTH} characters, used as given "
            f"('' included); {what}. Drawn at random when omitted."
        },
    )


def level_field() -> fields.String:
    return fields.String(
        load_default="expert",
        validate=validate.OneOf(LEVELS),
        metadata={"description": "which computer player advises (default expert)"},
    )


class VerifiedSchema(Schema):
    commitment = fields.Boolean(
        required=True, metadata={"description": "the seed's SHA-256 is the commitment"}
    )
    moves = fields.Integer(
        required=True, metadata={"description": "how many moves were checked and replayed"}
    )


class RecordPlayerSchema(Schema):
    seat = fields.Integer(required=True)
    type = fields.String(required=True, validate=validate.OneOf(["human", "bot"]))
    level = fields.String(metadata={"description": "bot seats only"})


# A record's rules and moves are its game's (ResolvedRules, LegalMove), told apart by the
# record's `game` only: declared as maps of any value, which every generator reads whole.
# Neither a bare object (typed clients read it as an empty one) nor an anyOf of the games'
# shapes (generators without a discriminator take the first game that reads the value).
ANY_OBJECT = {"type": "object", "additionalProperties": True}


class RecordMoveSchema(Schema):
    version = fields.Integer(required=True, metadata={"description": "the version it made"})
    seat = fields.Integer(required=True)
    move = shaped(
        {**ANY_OBJECT, "description": "the move as POST …/moves and the stateless apply take "
         "it: its game's LegalMove, as legal-moves writes it"},
        required=True,
    )  # fmt: skip
    by = fields.String(
        required=True,
        validate=validate.OneOf(["human", "bot", "timeout"]),
        metadata={"description": "who played it: the seat's human, its bot, or the server "
                  "for a seat whose time ran out or that was absent"},
    )  # fmt: skip
    absent = fields.Boolean(
        metadata={"description": "present (true) when the server played for an absent seat"}
    )


class RecordOutcomeSchema(Schema):
    winners = fields.List(fields.Integer(), required=True)
    scores = fields.List(
        fields.Integer(), required=True, metadata={"description": "each seat's match points"}
    )


class MatchRecordSchema(Schema):
    """A match record: all it takes to rebuild the whole match and check its deal."""

    format = fields.String(
        required=True, metadata={JSON_SCHEMA: {"type": "string", "const": "cards-record/1"}}
    )
    game = fields.String(required=True)
    rules = shaped(
        {**ANY_OBJECT, "description": "every option resolved: its game's ResolvedRules"},
        required=True,
    )
    seats = fields.Integer(required=True, metadata={"description": "the seat count"})
    players = fields.List(fields.Nested(RecordPlayerSchema), required=True)
    commitment = fields.String(required=True, metadata={"description": "SHA-256 (hex) of seed"})
    seed = fields.String(
        required=True,
        allow_none=True,
        validate=validate.Length(max=MAX_SEED_LENGTH),
        metadata={"description": "null until the match is over"},
    )
    moves = fields.List(fields.Nested(RecordMoveSchema), required=True)
    status = fields.String(required=True, validate=validate.OneOf(["playing", "match_over"]))
    outcome = fields.Nested(RecordOutcomeSchema, required=True, allow_none=True)


@dataclass(frozen=True, slots=True)
class Envelopes:
    """The request and answer schemas of one game's stateless paths."""

    new: type[Schema]
    state: type[Schema]
    apply: type[Schema]
    view: type[Schema]
    hint: type[Schema]
    state_answer: type[Schema]
    legal_moves_answer: type[Schema]
    apply_answer: type[Schema]
    score_answer: type[Schema]
    view_answer: type[Schema]
    hint_answer: type[Schema]
    replay: type[Schema]
    replay_answer: type[Schema]


def envelopes_of(name: str) -> Envelopes:
    """The envelopes of the registered game `name`."""
    return envelopes_for(get_game(name))


@cache
def envelopes_for(game: Game) -> Envelopes:
    """The envelopes of `game`, built once per game: kept by the game, not by its name,
    which another package may register again with other seats, presets and moves."""
    name = game.name
    title = title_of(name)
    catalogue = game.catalogue()
    *fewer, most = [str(count) for count in catalogue["seats"]]
    seats = f"{', '.join(fewer)} or {most}" if fewer else most
    defaults = {"preset": catalogue["default_preset"]}, min(catalogue["seats"])

    def state_field() -> RawObject:
        return RawObject(
            ref(f"{title}State"),
            "a game state",
            required=True,
            metadata={"description": f"a whole {title} state, as the server wrote it"},
        )

    def state_request(**more: Any) -> dict[str, Any]:
        return {"state": state_field(), **more}

    def legal_move(**kwargs: Any) -> fields.Raw:
        return shaped(ref(f"{title}LegalMove"), **kwargs)

    events = fields.List(shaped(ref(f"{title}Event")), required=True)
    view = shaped(ref(f"{title}View"), required=True)
    alternative = schema_class(
        f"{title}HintAlternative",
        {
            "move": legal_move(required=True),
            "value": fields.Float(
                required=True,
                metadata={
                    "description": "the bot's estimate for the mover: expert the mean point "
                    "difference of its playouts, greedy the immediate points, random the chance"
                },
            ),
        },
    )
    return Envelopes(
        new=schema_class(
            f"{title}NewGameRequest",
            {
                "rules": RawObject(
                    ref(f"{title}Rules"),
                    "a preset and rule options",
                    metadata={"description": f"default {json.dumps(defaults[0])}"},
                ),
                "seed": seed_field("same seed and rules give the same game"),
                "seats": fields.Integer(
                    strict=True,
                    metadata={
                        "description": f"{seats} (as the rules' seats_allowed permit); "
                        f"default {defaults[1]}",
                        "enum": catalogue["seats"],
                    },
                ),
            },
        ),
        state=schema_class(f"{title}StateRequest", state_request()),
        apply=schema_class(
            f"{title}ApplyRequest",
            state_request(move=MoveField(name, required=True)),
        ),
        view=schema_class(
            f"{title}ViewRequest",
            state_request(
                seat=fields.Integer(required=True, strict=True, validate=validate.Range(min=0))
            ),
        ),
        hint=schema_class(
            f"{title}HintRequest",
            state_request(
                level=level_field(),
                seed=seed_field(
                    "the bot's randomness: the same state, level and seed give the same hint"
                ),
            ),
        ),
        state_answer=schema_class(f"{title}StateResponse", {"state": state_field()}),
        legal_moves_answer=schema_class(
            f"{title}LegalMovesResponse", {"moves": fields.List(legal_move(), required=True)}
        ),
        apply_answer=schema_class(
            f"{title}ApplyResponse", {"state": state_field(), "events": events}
        ),
        score_answer=schema_class(
            f"{title}ScoreResponse",
            {"sides": fields.List(shaped(ref(f"{title}SideScore")), required=True)},
        ),
        view_answer=schema_class(f"{title}ViewResponse", {"view": view}),
        replay=schema_class(
            f"{title}ReplayRequest",
            {"record": RawObject(ref("MatchRecord"), "a match record", required=True)},
        ),
        replay_answer=schema_class(
            f"{title}ReplayResponse",
            {
                "state": state_field(),
                "events": fields.List(
                    fields.List(shaped(ref(f"{title}SessionEvent"))),
                    required=True,
                    metadata={
                        "description": "per move of the record, its events (all of "
                        "them: the match is over), tagged with its version"
                    },
                ),
                "verified": fields.Nested(VerifiedSchema, required=True),
            },
        ),
        hint_answer=schema_class(
            f"{title}HintResponse",
            {
                "move": legal_move(required=True, metadata={"description": "the advice"}),
                "alternatives": fields.List(
                    fields.Nested(alternative),
                    required=True,
                    metadata={
                        "description": "every legal move the bot weighed, in legal-moves order"
                    },
                ),
                "level": fields.String(required=True),
            },
        ),
    )


# -- the catalogue ---------------------------------------------------------------------------


def any_catalogue() -> dict[str, Any]:
    """Any game's entry of the catalogue, told apart by its `name`."""
    return tagged_union([f"{title_of(name)}Catalogue" for name in games()], "name", list(games()))


class CatalogueResponse(Schema):
    games = fields.List(shaped(any_catalogue), required=True)


# -- hosted sessions -------------------------------------------------------------------------


def registered(name: str) -> None:
    """A game name must be registered (checked at each call: the registry decides)."""
    if name not in games():
        raise ValidationError(f"Must be one of: {', '.join(games())}.")


SEAT_REQUEST = "#/components/schemas/SessionSeatRequest"
# What marshmallow's validator below checks, said in the schema: a bot seat has a level, a
# human seat none.
BOT_NEEDS_A_LEVEL = {
    "if": {"properties": {"type": {"const": "bot"}}},
    "then": {"required": ["level"]},
    "else": {"not": {"required": ["level"]}},
}


class SessionSeatRequest(Schema):
    """A human seat (no level) or a bot seat (with its level). No Meta.description: apispec
    then leaves out `additionalProperties: false`, and the document would take the unknown
    fields this schema refuses."""

    type = fields.String(required=True, validate=validate.OneOf(["human", "bot"]))
    level = fields.String(
        validate=validate.OneOf(LEVELS),
        metadata={"description": "bot seats only (required there): how strongly the bot plays"},
    )

    @validates_schema
    def bots_have_a_level(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data.get("type") == "bot" and "level" not in data:
            raise ValidationError(f"a bot seat needs a level, one of {list(LEVELS)}", "level")
        if data.get("type") == "human" and "level" in data:
            raise ValidationError("only a bot seat has a level", "level")


GAME = (
    f"a game of GET /v1/games; the service takes a request without it as {DEFAULT_GAME} "
    "(clients written when Basra was the only game)"
)
RULES = (
    "the game's rules: a preset and any options that override it (GET /v1/games lists "
    "them); default: the game's default preset. The game checks them."
)


class WebhookRequest(Schema):
    url = fields.String(
        required=True,
        validate=validate.Length(min=1, max=2048),
        metadata={"description": "an http or https URL whose host resolves to public "
                  "addresses only (or is in the service's WEBHOOK_HOSTS); else a 422 naming "
                  "webhook.url"},
    )  # fmt: skip
    events = fields.List(
        fields.String(validate=validate.OneOf(WEBHOOK_EVENTS)),
        metadata={
            "description": f"which messages to send (default all: {list(WEBHOOK_EVENTS)}; [] "
            "reads as left out)"
        },
    )


class WebhookSchema(Schema):
    url = fields.String(required=True)
    events = fields.List(fields.String(), required=True)
    secret = fields.String(
        metadata={"description": "in the creation's answer only: 'whsec_' + base64 of 24 random "
                  "bytes, the Standard Webhooks signing key"},
    )  # fmt: skip


class CreateSessionRequest(Schema):
    """How the service reads a session's creation; documented per game (its `game`, its
    rules and its seat counts) as `<Game>CreateSessionRequest`, told apart by `game`."""

    game = fields.String(load_default=DEFAULT_GAME, validate=registered)
    rules = RawObject({"type": "object"}, "a preset and rule options")
    seats = fields.List(
        fields.Nested(SessionSeatRequest),
        required=True,
        metadata={
            "description": "one entry per seat, as many as the game and its rules allow "
            "(GET /v1/games), at least one human: a human seat (no level) or a bot seat (with "
            "its level)",
            JSON_SCHEMA: {
                "contains": {"properties": {"type": {"const": "human"}}},
                "items": {"allOf": [{"$ref": SEAT_REQUEST}, BOT_NEEDS_A_LEVEL]},
            },
        },
    )
    seed = seed_field(
        "what the deals derive from; when two or more seats are human, checked but not dealt "
        "from (the server deals those from its own secret seed) unless the service allows "
        "client seeds"
    )
    turn_seconds = fields.Integer(
        strict=True,
        allow_none=True,
        validate=validate.Range(min=1, max=86400),
        metadata={
            "description": "the turn timer: the seat to move must move within this many seconds "
            "of the commit that made it its turn, else the server plays for it (timeout_level) "
            'and that version\'s events start with {"type": "timeout", "seat": s}. '
            "Absent or null: no timer"
        },
    )
    timeout_level = fields.String(
        validate=validate.OneOf(LEVELS),
        metadata={
            "description": "the computer player that plays for a seat whose time ran out, or "
            f"an absent seat (default {DEFAULT_TIMEOUT_LEVEL})"
        },
    )
    absent_after = fields.Integer(
        strict=True,
        allow_none=True,
        validate=validate.Range(min=1),
        metadata={
            "description": "after this many timeouts in a row a seat is absent: its turns are "
            "played at once by timeout_level until its token is used again on any session call"
        },
    )
    time_bank = fields.Integer(
        strict=True,
        allow_none=True,
        validate=validate.Range(min=0, max=86400),
        metadata={
            "description": "with turn_seconds: seconds each seat may spend beyond turn_seconds "
            "over the whole match; its deadline is turn_seconds plus what is left of its bank, "
            "a move takes what it used beyond turn_seconds from it, and a timeout empties it"
        },
    )
    webhook = fields.Nested(
        WebhookRequest,
        metadata={"description": "where to send signed messages about this session (its "
                  "turns, timeouts and end), Standard Webhooks"},
    )  # fmt: skip
    # No load_default: a documented default makes typed clients require the field.
    spectators = fields.Integer(
        strict=True,
        validate=validate.Range(min=0, max=MAX_SPECTATORS),
        metadata={
            "description": "how many spectator tokens to issue (default 0): a spectator reads "
            "the session, its events and its stream with public information only, and never "
            "moves. Seats can add more later (POST /v1/sessions/{id}/spectators)"
        },
    )

    @validates_schema
    def a_bank_needs_a_timer(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data.get("time_bank") is not None and data.get("turn_seconds") is None:
            raise ValidationError("a time bank needs turn_seconds", "time_bank")

    @validates_schema
    def someone_is_human(self, data: dict[str, Any], **kwargs: Any) -> None:
        if "seats" in data and not any(seat["type"] == "human" for seat in data["seats"]):
            raise ValidationError("at least one seat must be human", "seats")


class SessionSeatSchema(Schema):
    seat = fields.Integer(required=True)
    type = fields.String(required=True, metadata={"description": "'human' or 'bot'"})
    token = fields.String(
        metadata={"description": "human seats only: the seat's secret bearer token"}
    )
    level = fields.String(metadata={"description": "bot seats only"})


class OwnerSeatSchema(Schema):
    """A seat as its session's owner sees it."""

    seat = fields.Integer(required=True)
    type = fields.String(
        required=True,
        validate=validate.OneOf(["human", "bot"]),
        metadata={"description": "'human' or 'bot'"},
    )
    level = fields.String(metadata={"description": "bot seats only"})
    absent = fields.Boolean(
        required=True,
        metadata={"description": "whether the seat is absent (its turns played by the server)"},
    )


class SessionListQuery(Schema):
    status = fields.String(
        validate=validate.OneOf(["playing", "match_over"]),
        metadata={"description": "only the sessions in this status"},
    )
    limit = fields.Integer(
        load_default=20,
        validate=validate.Range(min=1, max=100),
        metadata={"description": "at most this many sessions (default 20)"},
    )
    cursor = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={"description": "the `next` of the page before: the page after it"},
    )


class ListedSessionSchema(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["playing", "match_over"]))
    version = fields.Integer(required=True)
    created_at = fields.String(required=True, metadata={"format": "date-time"})
    updated_at = fields.String(
        required=True,
        metadata={"format": "date-time", "description": "the time of its latest commit"},
    )
    to_move = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "the seat to move; null once the match is over"},
    )
    seats = fields.List(fields.Nested(OwnerSeatSchema), required=True)


class SessionListResponse(Schema):
    sessions = fields.List(
        fields.Nested(ListedSessionSchema),
        required=True,
        metadata={"description": "newest first"},
    )
    next = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "the cursor of the next page; null on the last one"},
    )


class SpectatorTokenSchema(Schema):
    token = fields.String(
        required=True, metadata={"description": "a spectator's secret bearer token"}
    )


def epoch_field() -> fields.Integer:
    return fields.Integer(
        required=True,
        metadata={"description": "grows when the session's store came back from a crash or a "
                  "failover and may have lost its latest moves (versions may have gone back, "
                  "and stored Idempotency-Key answers with them): read the session again"},
    )  # fmt: skip


class DealSchema(Schema):
    """Provably fair deals: the commitment from the start, the seed at the match's end."""

    commitment = fields.String(
        required=True,
        metadata={"description": "SHA-256 (hex) of the session's seed (UTF-8), fixed at "
                  "creation: the seed revealed at the end must hash to it"},
    )  # fmt: skip
    seed = fields.String(
        metadata={"description": "the seed, once the match is over: POST /v1/games/{game}/new "
                  "with it, the session's rules and seat count deals the very same match"},
    )  # fmt: skip


class CreateSessionResponse(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    version = fields.Integer(
        required=True, metadata={"description": "above 0 when bots moved first"}
    )
    seats = fields.List(fields.Nested(SessionSeatSchema), required=True)
    spectators = fields.List(
        fields.Nested(SpectatorTokenSchema),
        required=True,
        metadata={"description": "one entry per spectator token asked for ([] for none)"},
    )
    deal = fields.Nested(DealSchema, required=True)
    epoch = epoch_field()
    webhook = fields.Nested(
        WebhookSchema, metadata={"description": "with a webhook: its url, events and secret"}
    )


def timer_fields() -> dict[str, fields.Field]:
    """The turn timer and absent seats, as every session answer shows them."""
    return {
        "deadline": fields.String(
            required=True,
            allow_none=True,
            metadata={
                "format": "date-time",
                "description": "when the seat to move runs out of time (RFC 3339, UTC); null "
                "when no timer runs",
            },
        ),
        "time_left": fields.Float(
            required=True,
            allow_none=True,
            metadata={"description": "seconds left until the deadline as the server answered"},
        ),
        "absent": fields.List(
            fields.Integer(),
            required=True,
            metadata={"description": "the absent seats, ascending"},
        ),
        "time_banks": fields.List(
            fields.Float(),
            required=True,
            allow_none=True,
            metadata={
                "description": "per seat, the seconds left of its time bank as its current or "
                "next turn began (null without a time bank)"
            },
        ),
    }


def session_moves() -> dict[str, Any]:
    return {
        "description": "the seat's legal moves when it is its turn, else []; [] too when the "
        "game refuses to list them for their number (as POST …/legal-moves answers "
        "`too-large`): the seat moves all the same, naming a move its rules allow"
    }


def session_score(title: str) -> fields.List:
    return fields.List(
        shaped(ref(f"{title}SideScore")),
        required=True,
        metadata={
            "description": "game.score: each side's breakdown of the round or deal as it "
            "stands (public: what the captured piles and finishes already earn)"
        },
    )


def session_answer(name: str, role: str, attributes: dict[str, Any]) -> type[Schema]:
    """One game's session answer: `game` says which, so that a client tells the games'
    answers apart by it."""
    title = title_of(name)
    game = fields.String(
        required=True,
        metadata={JSON_SCHEMA: {"type": "string", "const": name, "description": "the game"}},
    )
    return schema_class(f"{title}{role}", {"game": game, **attributes})


def session_response(name: str) -> type[Schema]:
    """What a seat or spectator reads of a session of the game `name`."""
    title = title_of(name)
    return session_answer(
        name,
        "SessionResponse",
        {
            "id": fields.String(required=True),
            "version": fields.Integer(required=True),
            "seat": fields.Integer(
                required=True,
                allow_none=True,
                metadata={"description": "the token's seat; null for a spectator token"},
            ),
            "view": shaped(ref(f"{title}View"), required=True),
            "moves": fields.List(
                shaped(ref(f"{title}LegalMove")), required=True, metadata=session_moves()
            ),
            "score": session_score(title),
            "deal": fields.Nested(DealSchema, required=True),
            "epoch": epoch_field(),
            **timer_fields(),
            "seats": fields.List(
                fields.Nested(OwnerSeatSchema),
                metadata={
                    "description": "read with the owner's integrator key only: who sits "
                    "where (never a token)"
                },
            ),
            "webhook": fields.Nested(
                WebhookSchema,
                metadata={
                    "description": "when the session has a webhook: its url and events, "
                    "never its secret (shown once, in the creation's answer)"
                },
            ),
            "owner": fields.String(
                metadata={
                    "description": "read with the owner's integrator key only: the "
                    "integrator's name (API_KEYS)"
                },
            ),
        },
    )


def session_move_response(name: str) -> type[Schema]:
    """The answer to a seat's move in a session of the game `name`."""
    title = title_of(name)
    return session_answer(
        name,
        "SessionMoveResponse",
        {
            "version": fields.Integer(required=True),
            "epoch": epoch_field(),
            "view": shaped(ref(f"{title}View"), required=True),
            "moves": fields.List(
                shaped(ref(f"{title}LegalMove")), required=True, metadata=session_moves()
            ),
            "score": session_score(title),
            "events": fields.List(
                shaped(ref(f"{title}SessionEvent")),
                required=True,
                metadata={
                    "description": "the events of this move and the bots' replies, as this "
                    "seat may see them"
                },
            ),
            **timer_fields(),
        },
    )


def create_session_request(name: str) -> type[Schema]:
    """CreateSessionRequest as documented for the game `name`: its rules, its seat counts."""
    title = title_of(name)
    counts = get_game(name).catalogue()["seats"]
    seats = CreateSessionRequest._declared_fields["seats"]
    return type(
        f"{title}CreateSessionRequestSchema",
        (CreateSessionRequest,),
        {
            "game": fields.String(
                required=True,
                metadata={JSON_SCHEMA: {"type": "string", "const": name, "description": GAME}},
            ),
            "rules": RawObject(
                ref(f"{title}Rules"),
                "a preset and rule options",
                metadata={"description": RULES},
            ),
            "seats": fields.List(
                fields.Nested(SessionSeatRequest),
                required=True,
                metadata={**seats.metadata, "minItems": min(counts), "maxItems": max(counts)},
            ),
        },
    )


def per_game(name: str) -> list[type[Schema]]:
    """The session shapes of the game `name`, each its own component."""
    return [session_response(name), session_move_response(name), create_session_request(name)]


def union_by_game(role: str) -> dict[str, Any]:
    """Any game's `role` component (`BankSessionResponse`...), told apart by `game`."""
    names = [f"{title_of(name)}{role}" for name in games()]
    return tagged_union(names, "game", list(games()))


def session_unions() -> dict[str, dict[str, Any]]:
    """The components that say "a session of any game": its answers, told apart by `game`;
    its events, as the long poll and the stream send them (an array of the session's game's
    events, each read as any game's: the events carry no `game`)."""
    shared, members = any_game_session_events()
    return {
        "SessionResponse": union_by_game("SessionResponse"),
        "SessionMoveResponse": union_by_game("SessionMoveResponse"),
        "CreateSessionRequest": union_by_game("CreateSessionRequest"),
        "SessionEvents": {
            "type": "array",
            "description": "the events of the moves after the version asked for, each tagged "
            "with its version, as this token may see them: those of the session's game (each "
            "one of its <Game>SessionEvent; a type several games have, such as `capture`, is "
            "read as the event of any game of that type, e.g. CaptureSessionEvent)",
            # One array of any game's event, not one array per game: a generated client
            # reads an array item by item, and the empty array is every game's.
            "items": {"anyOf": [ref(name) for name in members]},
        },
        "TimeoutEvent": TIMEOUT_EVENT,
        **shared,
    }


def any_game_session_events() -> tuple[dict[str, Any], list[str]]:
    """The components that read an event of any game, and the members of the list of
    events whose game the document cannot say: for each `type` value, a game's own event
    where only it has the type, the timeout event (every game's), an event of any game
    (`CaptureSessionEvent`...) where several games have it (service/schemas/derived.py
    `any_game_event` says why) - unless one game's event has a field null that another's
    has not: an optional field that may be null is written back as null where it was left
    out (OpenAPI Generator's python client), so each game's event stays a member."""
    by_type: dict[str, dict[str, Any]] = {}
    for name in games():
        components = game_components(get_game(name))
        union = components[f"{title_of(name)}SessionEvent"]
        for value, target in union["discriminator"]["mapping"].items():
            component = target.rsplit("/", 1)[1]
            shape = TIMEOUT_EVENT if component == "TimeoutEvent" else components[component]
            by_type.setdefault(value, {})[component] = shape
    shared: dict[str, Any] = {}
    members: list[str] = []
    for value, found in by_type.items():
        merged = any_game_event(value, found) if len(found) > 1 else None
        if merged is None or optional_nullable(merged):
            members.extend(found)
            continue
        name = "".join(part.capitalize() for part in value.split("_")) + "SessionEvent"
        shared[name] = merged
        members.append(name)
    return shared, members


def optional_nullable(shape: dict[str, Any]) -> bool:
    """Whether the object `shape` has an optional field that may be null."""
    return any(
        "null" in (field.get("type") if isinstance(field.get("type"), list) else [])
        for name, field in shape["properties"].items()
        if name not in shape["required"]
    )


SessionResponse = ref("SessionResponse")
SessionMoveResponse = ref("SessionMoveResponse")


def session_events() -> dict[str, Any]:
    """The answer of the long poll: the events as the reading seat may see them."""
    return ref("SessionEvents")


def any_move() -> dict[str, Any]:
    return {
        "anyOf": [ref(f"{title_of(name)}Move") for name in games()],
        "description": "a move of the session's game (its Move)",
    }


class SessionMoveRequest(Schema):
    move = RawObject(any_move, "a move of the session's game", required=True)
    version = fields.Integer(
        required=True,
        strict=True,
        validate=validate.Range(min=0),
        metadata={"description": "the session's current version (else 409)"},
    )


# A version, as `after` and Last-Event-ID take it: JSON's largest exact integer at most,
# so a 64-bit integer for typed clients (without a format they make it 32 bits).
MAX_VERSION = 2**53 - 1
VERSION = validate.Range(min=0, max=MAX_VERSION)
INT64 = {"format": "int64"}


class SessionStreamQuery(Schema):
    after = fields.Integer(
        validate=VERSION,
        metadata={
            **INT64,
            "description": "a version: the stream starts with every version after it (as "
            "Last-Event-ID does; the header wins); without either, after the current version"
        },
    )


class StaleVersionProblem(ProblemSchema):
    """The 409 of a move on a version that is not the current one."""

    version = fields.Integer(
        required=True, metadata={"description": "the session's current version"}
    )


class SessionStreamHeaders(Schema):
    """The stream's headers (documentation only: the route reads Last-Event-ID itself, so
    that its 422 names the header)."""

    last_event_id = fields.Integer(
        data_key="Last-Event-ID",
        validate=VERSION,
        metadata={
            **INT64,
            "description": "resume after this version (what an EventSource sends on "
            "reconnecting): every later version once, in order"
        },
    )


class SessionEventsQuery(Schema):
    after = fields.Integer(
        load_default=0,
        validate=VERSION,
        metadata={**INT64, "description": "a version: the events of the moves after it"},
    )
