"""HTTP routes; every blueprint uses the orjson body parser below."""

import flask_smorest

from service.json import OrjsonParser


class Blueprint(flask_smorest.Blueprint):
    """flask-smorest's Blueprint reading JSON bodies with orjson (400/415 as problems)."""

    ARGUMENTS_PARSER = OrjsonParser()
