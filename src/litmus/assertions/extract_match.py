"""`extract_match`: a previously extracted variable satisfies the predicate."""

from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="extract_match",
    family="deterministic",
    doc="A previously extracted variable satisfies the predicate.",
    fields={
        "variable": FieldSpec("variable", "the extracted variable's name", required=True),
        "expected": FieldSpec("any", "deep equality", templated=True),
        "matches": FieldSpec("regex", "a regular expression the value matches", templated=True),
    },
    exactly_one_of=(("expected", "matches"),),
)


def evaluate(assertion, ctx):
    import json

    from litmus.assertions._common import describe, failed, json_equal, mismatch, passed, regex, show

    name = assertion.params["variable"]
    if "expected" in assertion.params:
        want = ctx.render(assertion.params["expected"])
    else:
        want = str(ctx.render(assertion.params["matches"]))
    if name not in ctx.variables:
        return failed(assertion, [mismatch(name, want, None, f"variable '{name}' was never extracted")])
    value = ctx.variables[name]
    if "expected" in assertion.params:
        if json_equal(value, want):
            return passed(assertion, f"{name} = {show(value)}")
        return failed(assertion, [mismatch(name, want, value, f"expected {show(want)}, got {describe(value)}")])
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if regex(want).search(text):
        return passed(assertion, f"{name} matches /{want}/")
    return failed(assertion, [mismatch(name, want, value, f"expected to match /{want}/, got {show(value)}")])
