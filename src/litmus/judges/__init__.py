"""LLM judges: providers, prompts, the verdict contract, escalation, the verdict cache and replay.

`JudgeService.from_config(config)` gives the run's judge; the nine LLM-based assertion types and
Intent Evaluation go through it. See docs/judges.md.
"""

from litmus.judges.service import JudgeConfigError, JudgeService

__all__ = ["JudgeConfigError", "JudgeService"]
