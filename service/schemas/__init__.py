"""The request and answer shapes: `derived` builds each game's components from the shapes
the game declares (engine/shapes.py); `envelopes` holds the requests and answers around
them, the catalogue and hosted sessions. Nothing here names a game.
"""

import apispec
import yaml
from apispec.ext.marshmallow import MarshmallowPlugin
from apispec.ext.marshmallow.common import make_schema_key

from engine.game import games
from service.schemas.derived import game_components, title_of
from service.schemas.envelopes import (
    CreateSessionRequest,
    per_game,
    session_unions,
    written_as_is,
)

__all__ = ["document", "names_kept", "spec_yaml"]


def document(spec: apispec.APISpec) -> None:
    """The components that fields refer to by $ref: every game's derived components, its
    session answers, and the unions over the games."""
    plugin = next(plugin for plugin in spec.plugins if isinstance(plugin, MarshmallowPlugin))
    plugin.converter.add_attribute_function(written_as_is)
    for game in games().values():
        for name, component in game_components(game).items():
            spec.components.schema(name, component)
        for schema in per_game(game.name):
            spec.components.schema(schema.__name__.removesuffix("Schema"), schema=schema)
    for name, component in session_unions().items():
        spec.components.schema(name, component)
    # The body of POST /v1/sessions is read by CreateSessionRequest and documented as the
    # union of the games' forms: the route's schema refers to the union by its name.
    plugin.converter.refs[make_schema_key(CreateSessionRequest())] = "CreateSessionRequest"


def names_kept(spec: apispec.APISpec) -> None:
    """Once every route is documented: each of the service's own components has its own
    name. A game's components are named after the game (`RecordMove` for a game `record`);
    apispec gives a service component whose name a game took another one (`RecordMove1`),
    which would change every game's generated clients: refuse that game instead."""
    converter = next(p for p in spec.plugins if isinstance(p, MarshmallowPlugin)).converter
    for key, name in converter.refs.items():
        own = converter.schema_name_resolver(key[0])
        if own and name != own:
            taken = [game for game in games() if own.startswith(title_of(game))]
            raise RuntimeError(
                f"the component {own!r} of the service is also a component of the game "
                f"{' or '.join(taken) or '?'} (named after it): rename the game"
            )


class PlainDumper(yaml.SafeDumper):
    """No YAML anchors: a schema reused by several fields is written out each time."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def spec_yaml(spec: apispec.APISpec) -> str:
    """The OpenAPI document as YAML."""
    return spec.to_yaml({"Dumper": PlainDumper})
