"""marshmallow schemas: the one source of the request and answer shapes.

`common` holds what every game's module builds on and finds a game's module by name;
`basra`, `bank`... hold each game's own shapes (state, view, move, legal move, one schema
per event type); `envelopes` the requests and answers around them. A game without a module
of its own is served with open object schemas: a new game needs nothing else here.
"""

import apispec
import yaml
from apispec.ext.marshmallow import MarshmallowPlugin

from service.schemas.common import GameSchemas, game_schemas
from service.schemas.envelopes import (
    SessionEventSchema,
    TimeoutEventSchema,
    component,
    schemas_of_games,
    written_as_is,
)

__all__ = ["GameSchemas", "document", "game_schemas", "spec_yaml"]


def document(spec: apispec.APISpec) -> None:
    """The components that fields refer to by $ref: every game's schemas, and the event
    a session tags with its version."""
    plugin = next(plugin for plugin in spec.plugins if isinstance(plugin, MarshmallowPlugin))
    plugin.converter.add_attribute_function(written_as_is)
    for schema in [*schemas_of_games(), SessionEventSchema, TimeoutEventSchema]:
        spec.components.schema(component(schema), schema=schema)


class PlainDumper(yaml.SafeDumper):
    """No YAML anchors: a schema reused by several fields is written out each time."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def spec_yaml(spec: apispec.APISpec) -> str:
    """The OpenAPI document as YAML."""
    return spec.to_yaml({"Dumper": PlainDumper})
