"""What the schemathesis runs share: the checked-in openapi.yaml, the checks every answer
must pass, and the document's paths served by an app of a given configuration."""

from pathlib import Path
from typing import Any

import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from service import create_app

OPENAPI = Path(__file__).resolve().parents[2] / "openapi.yaml"
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


def served_schema(path_regex: str, config: dict[str, Any]) -> Any:
    """The paths of openapi.yaml matching `path_regex`, called on create_app(config)."""
    schema = schemathesis.openapi.from_path(OPENAPI).include(path_regex=path_regex)
    schema.app = create_app(config)
    return schema
