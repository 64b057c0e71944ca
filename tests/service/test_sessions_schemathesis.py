"""Property-based calls on the hosted-session paths of the checked-in openapi.yaml (valid
and invalid data, random ids and tokens): never a 5xx, every answer as documented."""

from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
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

schema = schemathesis.openapi.from_path(OPENAPI).include(path_regex=r"^/v1/sessions")
schema.app = create_app({"REDIS_URL": None, "LONG_POLL_SECONDS": 0.0})


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_hosted_sessions_conform_to_openapi_yaml(case):
    case.call_and_validate(checks=CHECKS)
