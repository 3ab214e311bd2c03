"""Hypothesis settings shared by the fuzz tests: small and derandomized in CI, large and seeded at
random when bench/reliability.py sets LITMUS_FUZZ_EXAMPLES."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings


def fuzz_settings(default_examples: int) -> settings:
    examples = int(os.environ.get("LITMUS_FUZZ_EXAMPLES", default_examples))
    return settings(max_examples=examples, derandomize=examples <= 1000, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))
