"""Property-based calls on the hosted-session paths of the checked-in openapi.yaml (valid
and invalid data, random ids and tokens): never a 5xx, every answer as documented."""

from hypothesis import HealthCheck, settings

from tests.service.openapi_conformance import CHECKS, served_schema

schema = served_schema(r"^/v1/sessions", {"REDIS_URL": None, "LONG_POLL_SECONDS": 0.0})


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_hosted_sessions_conform_to_openapi_yaml(case):
    case.call_and_validate(checks=CHECKS)


class SessionSteps(schema.as_state_machine()):
    """Stateful phase: the links of openapi.yaml chain a creation to reading the session as
    each seat, moving with the move and version that read listed, reading its events and
    ending it with the same token (tests/service/test_openapi_links.py follows them by hand)."""

    def validate_response(self, response, case, **kwargs):
        case.validate_response(response, checks=CHECKS)


TestSessionSteps = SessionSteps.TestCase
TestSessionSteps.settings = settings(
    max_examples=20, stateful_step_count=6, deadline=None, suppress_health_check=list(HealthCheck)
)
