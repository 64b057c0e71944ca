"""The app as a whole: what its Flask subclass relies on."""

import inspect
from itertools import chain

from service import create_app


def test_no_view_or_hook_is_a_coroutine():
    # service.App skips Flask's per-request check for coroutines: one would never be run.
    app = create_app({"RATE_LIMITS": True})
    hooks = chain.from_iterable(
        chain.from_iterable(registry.values())
        for registry in (app.before_request_funcs, app.after_request_funcs,
                         app.teardown_request_funcs)
    )  # fmt: skip
    handlers = [
        handler
        for by_code in app.error_handler_spec.values()
        for by_class in by_code.values()
        for handler in by_class.values()
    ]
    functions = [*app.view_functions.values(), *hooks, *handlers]
    assert len(functions) > 20 and handlers
    assert not [f for f in functions if inspect.iscoroutinefunction(f)]
