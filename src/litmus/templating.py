"""The `{{ name }}` template syntax, shared by the loader (static checks) and the runner (rendering).

A template is `{{`, optional spaces, a dotted name, optional spaces, `}}`. Names:
bare names (extracted variables, suite `variables`), `env.NAME`, `secrets.NAME`, `scenario.id`,
`scenario.data.<path>`, `scenario.reference_response`, `run.index`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# Anything between {{ and }} is a template; whether its content is a valid name is checked after,
# so `{{ 1bad }}` is reported as an error rather than silently left in the text.
TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*")
NAMESPACES = ("env", "secrets", "scenario", "run")


@dataclass(frozen=True)
class Reference:
    """One `{{ ... }}` in a string: its name (stripped) and its offset span in the string."""

    name: str
    start: int
    end: int

    @property
    def valid(self) -> bool:
        return NAME.fullmatch(self.name) is not None

    @property
    def namespace(self) -> str | None:
        head = self.name.split(".", 1)[0]
        return head if head in NAMESPACES and "." in self.name else None


def references(text: str) -> Iterator[Reference]:
    for match in TEMPLATE.finditer(text):
        yield Reference(match.group(1).strip(), match.start(), match.end())


def whole_template(text: str) -> Reference | None:
    """The reference when `text` is exactly one template (its value keeps its type), else None."""
    match = TEMPLATE.fullmatch(text.strip())
    # `{{ a }}-{{ b }}` also "fully matches" (the lazy group stretches over `}}-{{`): that is two templates.
    if match is None or "}}" in match.group(1):
        return None
    return Reference(match.group(1).strip(), match.start(), match.end())
