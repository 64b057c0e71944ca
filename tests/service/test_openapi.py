"""openapi.yaml is generated; these fail when the checked-in copy is stale."""

import re

import yaml

from service import create_app
from service.openapi import production_spec_yaml
from tests.service.openapi_conformance import OPENAPI as CHECKED_IN


def test_checked_in_openapi_yaml_is_the_generated_one():
    assert CHECKED_IN.read_text() == production_spec_yaml(), (
        "openapi.yaml is stale: regenerate it with `make openapi` and commit it"
    )


def test_the_document_is_openapi_3_1_and_names_every_stateless_endpoint():
    document = yaml.safe_load(production_spec_yaml())
    assert document["openapi"] == "3.1.0"
    assert {"/v1/games", "/livez", "/readyz"} <= set(document["paths"])
    for action in ("new", "legal-moves", "apply", "score", "view"):
        operation = document["paths"][f"/v1/games/basra/{action}"]["post"]
        assert "application/json" in operation["requestBody"]["content"]
        assert operation["responses"]["default"] == {"$ref": "#/components/responses/PROBLEM"}
    problem = document["components"]["responses"]["PROBLEM"]["content"]
    assert list(problem) == ["application/problem+json"]


def test_the_service_serves_its_document_and_the_docs_page_without_internet():
    client = create_app().test_client()
    served = client.get("/openapi.yaml")
    assert served.status_code == 200
    assert served.get_data(as_text=True) == production_spec_yaml()
    page = client.get("/docs/")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "/openapi.yaml" in html
    assert all(link.startswith("/docs/") for link in re.findall(r'(?:src|href)="([^"]*)"', html))
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui-standalone-preset.js"):
        assert f"/docs/{asset}" in html
        response = client.get(f"/docs/{asset}")
        assert response.status_code == 200
        assert len(response.get_data()) > 10_000
