"""Litmus: probe suites for HTTP and LLM-backed APIs, reported where reviewers look."""

__version__ = "0.1.0"
