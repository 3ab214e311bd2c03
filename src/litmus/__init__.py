"""Litmus: probe suites for HTTP and LLM-backed APIs, reported where reviewers look."""

__version__ = "0.1.0"
# Where users learn about Litmus: the tool's `informationUri` in SARIF.
HOMEPAGE = "https://github.com/litmus-lab/litmus"
