"""Cutting text to a length, with the one mark every cut Litmus makes carries."""

# The cut mark. It is part of the redaction contract: litmus.run.redact masks the piece of a secret
# left next to it, so a cut that did not carry it could show the start of a secret.
MARK = "…"


def clip(text: str, limit: int) -> str:
    """`text` when it fits in `limit` characters, else its start ended by MARK, `limit` characters in all."""
    return text if len(text) <= limit else text[: limit - len(MARK)] + MARK
