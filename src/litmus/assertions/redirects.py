"""`redirects`: the number of redirects followed to reach the response satisfies the predicate.

0 when the first response was the answer, or when `follow_redirects: false` left a redirect
unfollowed (then `status_code` and `header Location` check it).
"""

from litmus.assertions import predicates
from litmus.assertions.base import AssertionSpec

SPEC = AssertionSpec(
    type="redirects",
    family="deterministic",
    doc="The number of redirects followed (hops) satisfies the predicate.",
    fields=predicates.fields("the number of redirects followed"),
    exactly_one_of=(predicates.KEYS,),
)


def evaluate(assertion, ctx):
    hops = ctx.response.redirects
    return predicates.evaluate(assertion, ctx, [("redirects", len(hops))], where="redirects",
                               missing="no redirect count", noun="count")
