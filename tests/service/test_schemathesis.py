"""Property-based calls generated from the checked-in openapi.yaml (valid and invalid data):
never a 5xx, and every answer matches the document (status, content type, body)."""

from hypothesis import HealthCheck, settings

from tests.service.openapi_conformance import CHECKS, served_schema

schema = served_schema(r"^/(v1/games|livez|readyz)", {"REDIS_URL": None})


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_stateless_api_conforms_to_openapi_yaml(case):
    case.call_and_validate(checks=CHECKS)
