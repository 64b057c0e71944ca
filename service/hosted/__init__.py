"""Hosted sessions: the server keeps a game, played by seat-token holders and bots.

`sessions.open_sessions(config)` is the one place that picks the store, the hub and the
schedule for a configuration and joins the parts: tokens (identity), records (the session
read into typed values), commit (the one commit path and the facts it produces), schedule
and timers (turn deadlines), follow (the one loop of long polls and streams), hub (waiting
readers), answers (what a reader gets), sessions (the calls the routes make).
"""
