"""The HTTP conventions openapi.yaml declares for generators and clients: operation ids,
the server, retries (429 and 503 with Retry-After), the bearer scheme."""

import re

import pytest
import yaml

from service.openapi import production_spec_yaml

DOCUMENT = yaml.safe_load(production_spec_yaml())
METHODS = {"get", "put", "post", "delete", "patch"}
OPERATIONS = [
    (path, method, operation)
    for path, item in DOCUMENT["paths"].items()
    for method, operation in item.items()
    if method in METHODS
]
PROBES = {"/livez", "/readyz"}


def resolved(response: dict) -> dict:
    """A response, its $ref to components/responses followed."""
    ref = response.get("$ref")
    return DOCUMENT["components"]["responses"][ref.rsplit("/", 1)[1]] if ref else response


def test_every_operation_has_a_unique_camel_case_operation_id():
    ids = [operation.get("operationId") for _, _, operation in OPERATIONS]
    assert all(ids) and len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[a-z][A-Za-z]+", name) for name in ids)


def test_the_session_operations_have_the_ids_clients_are_written_against():
    ids = {(path, method): operation["operationId"] for path, method, operation in OPERATIONS}
    assert ids[("/v1/sessions", "post")] == "createSession"
    assert ids[("/v1/sessions/{session_id}", "get")] == "getSession"
    assert ids[("/v1/sessions/{session_id}/moves", "post")] == "playMove"
    assert ids[("/v1/games/basra/legal-moves", "post")] == "listBasraLegalMoves"
    assert ids[("/v1/games/bank/apply", "post")] == "applyBankMove"


def test_the_one_server_is_the_service_serving_the_document():
    assert [server["url"] for server in DOCUMENT["servers"]] == ["/"]


@pytest.mark.parametrize(("path", "method", "operation"), OPERATIONS, ids=lambda v: str(v)[:40])
def test_every_limited_operation_declares_its_429_with_retry_after(path, method, operation):
    if path in PROBES:
        assert "429" not in operation["responses"]
        return
    response = resolved(operation["responses"]["429"])
    assert response["headers"]["Retry-After"]["schema"]["type"] == "integer"
    assert "application/problem+json" in response["content"]


def test_every_session_operation_and_readiness_declare_a_503_with_retry_after():
    for path, _, operation in OPERATIONS:
        if path.startswith("/v1/sessions") or path == "/readyz":
            response = resolved(operation["responses"]["503"])
            assert "Retry-After" in response["headers"], path


def test_tokens_are_a_bearer_scheme_not_a_header_parameter():
    scheme = DOCUMENT["components"]["securitySchemes"]["seatToken"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    for path, _, operation in OPERATIONS:
        names = {parameter["name"].lower() for parameter in operation.get("parameters", [])}
        assert "authorization" not in names, path
        if path.startswith("/v1/sessions/"):
            assert operation["security"] == [{"seatToken": []}]


def test_last_event_id_has_the_bounds_of_after():
    stream = DOCUMENT["paths"]["/v1/sessions/{session_id}/stream"]["get"]
    by_name = {parameter["name"]: parameter["schema"] for parameter in stream["parameters"]}
    header, after = by_name["Last-Event-ID"], by_name["after"]
    assert (header["minimum"], header["maximum"]) == (after["minimum"], after["maximum"])
