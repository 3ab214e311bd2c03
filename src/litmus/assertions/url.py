"""`url`: the final URL of the response, after every redirect followed, satisfies the predicate.

The URL is absolute, as the last request was sent (query included), so `ends_with` / `matches`
check a path whatever the base URL is.
"""

from litmus.assertions import predicates
from litmus.assertions.base import AssertionSpec

SPEC = AssertionSpec(
    type="url",
    family="deterministic",
    doc="The final URL, after the redirects followed, satisfies the predicate.",
    fields=predicates.fields("the final URL"),
    exactly_one_of=(predicates.KEYS,),
)


def evaluate(assertion, ctx):
    return predicates.evaluate(assertion, ctx, [("url", ctx.response.url)], where="url", missing="no final URL",
                               noun="URL")
