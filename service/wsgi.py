"""`app` for gunicorn: configured from the environment. Each worker process imports this
after it forked (no preload), so each starts its own turn-timer scanner and webhook
delivery loop here."""

from service import create_app

app = create_app()
app.extensions["sessions"].timers.start(float(app.config["TIMER_SCAN_SECONDS"]))
app.extensions["sessions"].deliveries.start(float(app.config["WEBHOOK_SCAN_SECONDS"]))
