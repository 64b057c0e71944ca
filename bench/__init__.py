"""Benchmarks (not tests): engine speed, HTTP throughput, hosted sessions."""
