"""`app` for gunicorn: configured from the environment. Each worker process imports this
after it forked (no preload), so each starts its own turn-timer scanner here."""

from service import create_app

app = create_app()
app.extensions["sessions"].timers.start(float(app.config["TIMER_SCAN_SECONDS"]))
