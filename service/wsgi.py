"""`app` for gunicorn: configured from the environment."""

from service import create_app

app = create_app()
