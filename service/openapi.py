"""`python -m service.openapi` prints the OpenAPI document (`make openapi` writes openapi.yaml)."""

from service import create_app
from service.schemas import spec_yaml


def production_spec_yaml() -> str:
    """The document of the production routes, generated from the schemas."""
    app = create_app({"REDIS_URL": None})
    return spec_yaml(app.extensions["flask-smorest"]["apis"][""]["ext_obj"].spec)


if __name__ == "__main__":
    print(production_spec_yaml(), end="")
