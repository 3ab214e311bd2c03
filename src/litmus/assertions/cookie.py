"""`cookie`: a cookie the response sets (`Set-Cookie`): its value and its attributes.

Set-Cookie lines are parsed with the standard library (`http.cookiejar.parse_ns_headers`, which
keeps values `http.cookies` would drop and reads `Expires` dates). A name set more than once is
read from its last line, as a browser's jar keeps the last.
"""

import time

from litmus.assertions import predicates
from litmus.assertions._common import errored, failed, mismatch, passed, show
from litmus.assertions.base import AssertionSpec, FieldSpec

ATTRIBUTES = ("secure", "http_only", "same_site", "domain", "path", "max_age_gte")

SPEC = AssertionSpec(
    type="cookie",
    family="deterministic",
    doc="A cookie the response sets: a predicate on its value and/or its attributes.",
    fields={
        "cookie": FieldSpec("string", "the cookie's name", required=True),
        **predicates.fields("the cookie's value"),
        "secure": FieldSpec("boolean", "the cookie has (true) or lacks (false) the Secure attribute"),
        "http_only": FieldSpec("boolean", "the cookie has (true) or lacks (false) the HttpOnly attribute"),
        "same_site": FieldSpec("choice", "its SameSite attribute (compared case-insensitively)",
                               choices=("Strict", "Lax", "None")),
        "domain": FieldSpec("string", "its Domain attribute (a leading dot and case ignored)", templated=True),
        "path": FieldSpec("string", "its Path attribute", templated=True),
        "max_age_gte": FieldSpec("numeric", "it lives at least this many seconds (Max-Age, else Expires)",
                                 templated=True),
    },
    at_most_one_of=(predicates.KEYS,),
    at_least_one_of=((*predicates.KEYS, *ATTRIBUTES),),
)


def evaluate(assertion, ctx):
    params = assertion.params
    name = params["cookie"]
    where = path(name)
    cookies = parse(ctx.response.header_values("Set-Cookie"))
    cookie = cookies.get(name)
    key = predicates.given(params)
    if cookie is None:
        missing = f"the response sets no cookie {name}" + (f" (it sets {', '.join(cookies)})" if cookies else "")
        if key is None:
            return failed(assertion, [mismatch(where, "a Set-Cookie", None, missing)])
        # `exists: false` passes; any other predicate fails, saying so.
        return predicates.evaluate(assertion, ctx, [], where=where, missing=missing, noun="cookie")
    mismatches = []
    if key is not None:
        outcome = predicates.evaluate(assertion, ctx, [(where, cookie["value"])], where=where, missing="",
                                      text_values=True, noun="cookie")
        if outcome.status == "error":
            return outcome
        mismatches.extend(outcome.mismatches)
    try:
        mismatches.extend(_attribute_mismatches(params, cookie, where, ctx.render))
    except predicates.PredicateError as exc:
        return errored(assertion, str(exc), where)
    if mismatches:
        return failed(assertion, mismatches)
    checked = [k for k in ATTRIBUTES if k in params]
    return passed(assertion, f"cookie {name}" + (f": {', '.join(checked)} as expected" if checked else " is set"))


def path(name: str) -> str:
    return f"cookies['{name}']"


def parse(lines: list[str]) -> dict[str, dict]:
    """Cookie name -> {value, attributes (lower-cased names)}: the last Set-Cookie line for each name."""
    from http.cookiejar import parse_ns_headers  # lazy: the loader imports every spec; cookiejar costs 23 ms

    cookies: dict[str, dict] = {}
    for pairs in parse_ns_headers(lines):
        if not pairs:
            continue
        name, value = pairs[0]
        attributes = {key.lower(): v for key, v in pairs[1:]}
        cookies[name] = {"value": value if value is not None else "", "attributes": attributes}
    return cookies


def protected_values(lines: list[str]) -> list[str]:
    """The values of the HttpOnly or Secure cookies these Set-Cookie lines set (redacted in every output)."""
    return [c["value"] for c in parse(lines).values()
            if c["value"] and ("httponly" in c["attributes"] or "secure" in c["attributes"])]


def _attribute_mismatches(params, cookie, where, render):

    attributes = cookie["attributes"]
    for key, attribute in (("secure", "secure"), ("http_only", "httponly")):
        if key in params and (attribute in attributes) != params[key]:
            has = "has" if attribute in attributes else "lacks"
            yield mismatch(f"{where}.{key}", params[key], attribute in attributes,
                           f"expected {'' if params[key] else 'no '}{_label(key)} attribute, the cookie {has} it")
    if "same_site" in params:
        actual = attributes.get("samesite")
        if actual is None or actual.lower() != params["same_site"].lower():
            got = "no SameSite attribute" if actual is None else f"SameSite={actual}"
            yield mismatch(f"{where}.same_site", params["same_site"], actual,
                           f"expected SameSite={params['same_site']}, got {got}")
    if "domain" in params:
        want, actual = str(render(params["domain"])), attributes.get("domain")
        if actual is None or actual.lstrip(".").lower() != want.lstrip(".").lower():
            yield mismatch(f"{where}.domain", want, actual,
                           f"expected Domain={want}, got {'no Domain attribute' if actual is None else show(actual)}")
    if "path" in params:
        want, actual = str(render(params["path"])), attributes.get("path")
        if actual != want:
            yield mismatch(f"{where}.path", want, actual,
                           f"expected Path={want}, got {'no Path attribute' if actual is None else show(actual)}")
    if "max_age_gte" in params:
        want = predicates.build({"gte": params["max_age_gte"]}, render).operand
        lifetime = _lifetime(attributes, time.time())
        if lifetime is None or lifetime < want:
            got = "a session cookie (no Max-Age or Expires)" if lifetime is None else f"{lifetime:g} s"
            yield mismatch(f"{where}.max_age", f">= {want}", lifetime, f"expected to live >= {want} s, got {got}")


def _label(key: str) -> str:
    return {"secure": "Secure", "http_only": "HttpOnly"}[key]


def _lifetime(attributes, now: float) -> float | None:
    """Seconds the cookie lives: Max-Age wins over Expires (RFC 6265 5.3); None for a session cookie."""
    if "max-age" in attributes:
        try:
            return float(attributes["max-age"])
        except (TypeError, ValueError):
            return None
    expires = attributes.get("expires")
    return None if expires is None else round(expires - now)
