"""Text helpers for messages: cutting text to a length, with the one mark every cut Litmus makes
carries, and suggesting the name a misspelling meant."""

# The cut mark. It is part of the redaction contract: litmus.run.redact masks the piece of a secret
# left next to it, so a cut that did not carry it could show the start of a secret.
MARK = "…"


def clip(text: str, limit: int) -> str:
    """`text` when it fits in `limit` characters, else its start ended by MARK, `limit` characters in all."""
    return text if len(text) <= limit else text[: limit - len(MARK)] + MARK


def did_you_mean(word: str, candidates) -> str:
    """` (did you mean 'x'?)` when a close candidate exists, else ''."""
    import difflib  # lazy: only a misspelling needs it, and it would add 2 ms to every start-up

    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`1 flow run`, `3 flow runs`, `2 entries` (given `plural`): a number and its noun, agreeing."""
    return f"{n} {noun_for(n, noun, plural)}"


def noun_for(n: int, noun: str, plural: str | None = None) -> str:
    """The noun as `n` of it reads: `run` for 1, `runs` (or `plural`) for any other number."""
    return noun if n == 1 else plural or noun + "s"


# Words whose first letters are said as letters, or start with a vowel sound though not a vowel letter.
_AN_BEFORE = ("xpath", "xml", "llm", "html", "http", "sse", "sha", "hour")


def with_article(phrase: str) -> str:
    """`a json_path assertion`, `an xpath assertion`, `an llm_rubric`, `a unique id`: "a" or "an" by sound."""
    word = phrase.lower()
    vowel_sound = (word[:1] in ("a", "e", "i", "o") or word.startswith(_AN_BEFORE)
                   or (word.startswith("un") and not word.startswith(("uni", "unan"))))
    return f"{'an' if vowel_sound else 'a'} {phrase}"
