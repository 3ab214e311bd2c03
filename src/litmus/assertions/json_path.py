"""`json_path`: the JSONPath's matches satisfy the predicate, node by node."""

from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="json_path",
    family="deterministic",
    doc="The JSONPath's matches satisfy the predicate, node by node.",
    fields={
        "path": FieldSpec("jsonpath", "a JSONPath expression, e.g. $.items[*].price", required=True),
        "expected": FieldSpec("any", "deep equality", templated=True),
        "matches": FieldSpec("regex", "a regular expression the (string) value matches", templated=True),
        "exists": FieldSpec("boolean", "true: at least one node matches; false: none does"),
        "contains": FieldSpec("any", "a substring, an array element or an object key", templated=True),
        "length": FieldSpec("integer", "the length of a string, array or object", minimum=0),
        "gt": FieldSpec("number", "greater than"),
        "gte": FieldSpec("number", "greater than or equal to"),
        "lt": FieldSpec("number", "less than"),
        "lte": FieldSpec("number", "less than or equal to"),
        "one_of": FieldSpec("list", "the value equals one of these", templated=True),
        "type": FieldSpec(
            "choice", "the JSON type of the value",
            choices=("string", "number", "integer", "boolean", "object", "array", "null"),
        ),
    },
    exactly_one_of=(
        ("expected", "matches", "exists", "contains", "length", "gt", "gte", "lt", "lte", "one_of", "type"),
    ),
)


def evaluate(assertion, ctx):
    from litmus.assertions._common import errored, failed, mismatch, passed, show
    from litmus.assertions._jsonpaths import find
    from litmus.run.response import BodyNotJSON

    params = assertion.params
    expression = params["path"]
    try:
        document = ctx.response.json()
    except BodyNotJSON as exc:
        return errored(assertion, str(exc))
    nodes = find(expression, document)
    if "exists" in params:
        if params["exists"] and not nodes:
            return failed(assertion, [mismatch(expression, "a node", None, "no node matches")])
        if not params["exists"] and nodes:
            return failed(assertion, [
                mismatch(path, "no node", value, f"expected no node here, found {show(value)}")
                for path, value in nodes
            ])
        return passed(assertion, f"{expression}: {len(nodes)} node(s) match")
    if not nodes:
        return failed(assertion, [mismatch(expression, _expected(params, ctx), None, "no node matches")])
    expected, check = _predicate(params, ctx)
    mismatches = [mismatch(path, expected, value, reason) for path, value in nodes if (reason := check(value))]
    if mismatches:
        return failed(assertion, mismatches)
    if len(nodes) == 1:
        return passed(assertion, f"{nodes[0][0]}: {show(nodes[0][1])}")
    return passed(assertion, f"{expression}: all {len(nodes)} nodes satisfy it")


def _expected(params, ctx):
    return _predicate(params, ctx)[0]


_COMPARISONS = {
    "gt": (">", lambda a, b: a > b),
    "gte": (">=", lambda a, b: a >= b),
    "lt": ("<", lambda a, b: a < b),
    "lte": ("<=", lambda a, b: a <= b),
}


def _predicate(params, ctx):
    """(expected value for the mismatch record, check(value) -> reason it fails or None)."""
    from litmus.assertions._common import describe, has_type, is_number, json_equal, json_type, regex, show

    if "expected" in params:
        want = ctx.render(params["expected"])

        def check(value):
            if json_equal(value, want):
                return None
            if json_type(value) == json_type(want) or (is_number(value) and is_number(want)):
                return f"expected {show(want)}, got {show(value)}"
            return f"expected {describe(want)}, got {describe(value)}"
        return want, check
    if "matches" in params:
        pattern = str(ctx.render(params["matches"]))

        def check(value):
            if not isinstance(value, str):
                return f"expected a string matching /{pattern}/, got {describe(value)}"
            return None if regex(pattern).search(value) else f"expected to match /{pattern}/, got {show(value)}"
        return pattern, check
    if "contains" in params:
        part = ctx.render(params["contains"])

        def check(value):
            if isinstance(value, str):
                ok = isinstance(part, str) and part in value
            elif isinstance(value, list):
                ok = any(json_equal(item, part) for item in value)
            elif isinstance(value, dict):
                ok = part in value
            else:
                return f"expected a string, array or object containing {show(part)}, got {describe(value)}"
            return None if ok else f"expected to contain {show(part)}, got {show(value)}"
        return part, check
    if "length" in params:
        size = params["length"]

        def check(value):
            if not isinstance(value, (str, list, dict)):
                return f"expected a string, array or object of length {size}, got {describe(value)}"
            return None if len(value) == size else f"expected length {size}, got length {len(value)}"
        return size, check
    if "one_of" in params:
        options = ctx.render(params["one_of"])

        def check(value):
            if any(json_equal(value, option) for option in options):
                return None
            return f"expected one of {show(options)}, got {show(value)}"
        return options, check
    if "type" in params:
        kind = params["type"]

        def check(value):
            return None if has_type(value, kind) else f"expected {kind}, got {describe(value)}"
        return kind, check
    key = next(k for k in _COMPARISONS if k in params)
    symbol, compare = _COMPARISONS[key]
    limit = params[key]

    def check(value):
        if not is_number(value):
            return f"expected a number {symbol} {limit}, got {describe(value)}"
        return None if compare(value, limit) else f"expected {symbol} {limit}, got {show(value)}"
    return f"{symbol} {limit}", check
