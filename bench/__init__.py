"""Benchmarks (not tests): engine speed, HTTP throughput, hosted sessions."""

import os

# Benchmarks drive the service from one address as fast as it answers: rate limits (on by
# default) would measure themselves. A run that wants them sets RATE_LIMITS=true.
os.environ.setdefault("RATE_LIMITS", "false")
