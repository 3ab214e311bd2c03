"""Every predicate on every type it applies to, through `litmus run` against a real target on 127.0.0.1:
passing, failing, negated, templated, with the exact mismatch paths and reasons.

One suite holds every case (one assertion each, named by the case id) and runs once; each case
then checks its own outcome in results.json.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from harness import HeaderLines, outcomes, run_suite, suite_of

from support.target import Target

ORDER = {"order": {"id": 1042, "status": "shipped", "total": 34.0, "tags": ["gift", "express"], "note": None,
                   "meta": {"source": "web"}},
         "items": [{"price": 10}, {"price": 5.5}, {"price": 3}]}
TEXT = "Order 1042 shipped"
HTML = ("<!doctype html><html><head><title>Invoice 1042</title></head><body><ul id='lines'>"
        "<li class='line'>Coffee <b>x2</b></li><li class='line'>Mug</li><li class='line'>Filters</li></ul>"
        "<p>Total: <span id='total'>34.00</span> EUR</p><a rel='order' href='/orders/1042'>back</a></body></html>")
XML = ("<?xml version='1.0'?><catalog xmlns:p='urn:demo:price'>"
       "<product sku='COF-250'><name>Coffee</name><p:price currency='EUR'>12.50</p:price></product>"
       "<product sku='MUG-01'><name>Mug</name><p:price currency='EUR'>9.00</p:price></product></catalog>")
HEADERS = HeaderLines([
    ("Content-Type", "text/plain; charset=utf-8"), ("X-Upstream", "nginx/1.18.0"), ("X-Count", "42"),
    ("Vary", "Accept"), ("Vary", "Origin"),
    ("Set-Cookie", "sid=s3cr3t-sid-value; Path=/; Domain=.example.test; HttpOnly; Secure; SameSite=Strict; "
                   "Max-Age=3600"),
    ("Set-Cookie", "theme=dark; Path=/app; SameSite=Lax; Expires=Wed, 21 Oct 2099 07:28:00 GMT"),
    ("Set-Cookie", "visits=42"),
])
VARIABLES = {"status": "shipped", "low": 30, "high": "40", "word": "abc", "tags": ["gift", "express"],
             "prefix": "Order", "count": "42", "sku": "COF-250", "nothing": []}

PASS, FAIL, ERROR = "passed", "failed", "error"
NOT = {"not": True}

# (case id, step, assertion fields, status, [(path, reason)] expected in mismatches, or None: not checked)
CASES = [
    # -- json_path ------------------------------------------------------------------------------
    ("jp-expected", "json", {"type": "json_path", "path": "$.order.status", "expected": "shipped"}, PASS, []),
    ("jp-expected-fail", "json", {"type": "json_path", "path": "$.order.status", "expected": "delayed"}, FAIL,
     [("$.order.status", 'expected "delayed", got "shipped"')]),
    ("jp-expected-types-kept", "json", {"type": "json_path", "path": "$.order.id", "expected": "1042"}, FAIL,
     [("$.order.id", 'expected string "1042", got integer 1042')]),
    ("jp-expected-not", "json", {"type": "json_path", "path": "$.order.status", "expected": "delayed", **NOT},
     PASS, []),
    ("jp-expected-not-fail", "json", {"type": "json_path", "path": "$.order.status", "expected": "shipped", **NOT},
     FAIL, [("$.order.status", 'expected not "shipped", got "shipped"')]),
    ("jp-expected-template", "json", {"type": "json_path", "path": "$.order.status", "expected": "{{ status }}"},
     PASS, []),
    ("jp-matches", "json", {"type": "json_path", "path": "$.order.status", "matches": "^ship"}, PASS, []),
    ("jp-matches-fail", "json", {"type": "json_path", "path": "$.order.status", "matches": "^del"}, FAIL,
     [("$.order.status", 'expected to match /^del/, got "shipped"')]),
    ("jp-matches-not-fail", "json", {"type": "json_path", "path": "$.order.status", "matches": "ship", **NOT},
     FAIL, [("$.order.status", 'expected not to match /ship/, got "shipped"')]),
    ("jp-matches-number-is-no-string", "json", {"type": "json_path", "path": "$.order.id", "matches": "10", **NOT},
     FAIL, [("$.order.id", "expected a string not matching /10/, got integer 1042")]),
    ("jp-exists", "json", {"type": "json_path", "path": "$.order.note", "exists": True}, PASS, []),
    ("jp-exists-fail", "json", {"type": "json_path", "path": "$.order.gone", "exists": True}, FAIL,
     [("$.order.gone", "no node matches")]),
    ("jp-exists-false-fail", "json", {"type": "json_path", "path": "$.order.note", "exists": False}, FAIL,
     [("$.order.note", "expected no node here, found null")]),
    ("jp-exists-not", "json", {"type": "json_path", "path": "$.order.gone", "exists": True, **NOT}, PASS, []),
    ("jp-contains-substring", "json", {"type": "json_path", "path": "$.order.status", "contains": "hip"}, PASS, []),
    ("jp-contains-element", "json", {"type": "json_path", "path": "$.order.tags", "contains": "gift"}, PASS, []),
    ("jp-contains-key", "json", {"type": "json_path", "path": "$.order.meta", "contains": "source"}, PASS, []),
    ("jp-contains-fail", "json", {"type": "json_path", "path": "$.order.tags", "contains": "fragile"}, FAIL,
     [("$.order.tags", 'expected to contain "fragile", got ["gift", "express"]')]),
    ("jp-contains-not", "json", {"type": "json_path", "path": "$.order.tags", "contains": "fragile", **NOT}, PASS,
     []),
    ("jp-contains-any", "json", {"type": "json_path", "path": "$.order.tags", "contains_any": ["fragile", "gift"]},
     PASS, []),
    ("jp-contains-any-fail", "json", {"type": "json_path", "path": "$.order.status",
                                      "contains_any": ["lost", "late"]}, FAIL,
     [("$.order.status", 'expected to contain any of ["lost", "late"], got "shipped"')]),
    ("jp-contains-all", "json", {"type": "json_path", "path": "$.order.meta", "contains_all": ["source"]}, PASS, []),
    ("jp-contains-all-fail", "json", {"type": "json_path", "path": "$.order.tags",
                                      "contains_all": ["gift", "fragile", "express"]}, FAIL,
     [("$.order.tags", 'expected to contain all of ["gift", "fragile", "express"], got ["gift", "express"] '
                       '(missing "fragile")')]),
    ("jp-contains-all-not", "json", {"type": "json_path", "path": "$.order.tags",
                                     "contains_all": ["gift", "express"], **NOT}, FAIL,
     [("$.order.tags", 'expected not to contain all of ["gift", "express"], got ["gift", "express"]')]),
    ("jp-contains-any-number-no-pass-under-not", "json", {"type": "json_path", "path": "$.order.id",
                                                          "contains_any": ["1"], **NOT}, FAIL,
     [("$.order.id", 'expected a string, array or object not containing any of ["1"], got integer 1042')]),
    ("jp-contains-all-template", "json", {"type": "json_path", "path": "$.order.tags", "contains_all": "{{ tags }}"},
     PASS, []),
    ("jp-contains-all-template-empty", "json", {"type": "json_path", "path": "$.order.tags",
                                                "contains_all": "{{ nothing }}"}, ERROR,
     [("$.order.tags",
       "'contains_all' must be a non-empty list, got array of 0 items (rendered from '{{ nothing }}')")]),
    ("jp-starts-with", "json", {"type": "json_path", "path": "$.order.status", "starts_with": "ship"}, PASS, []),
    ("jp-starts-with-fail", "json", {"type": "json_path", "path": "$.order.status", "starts_with": "del"}, FAIL,
     [("$.order.status", 'expected to start with "del", got "shipped"')]),
    ("jp-ends-with", "json", {"type": "json_path", "path": "$.order.status", "ends_with": "ped"}, PASS, []),
    ("jp-ends-with-not-fail", "json", {"type": "json_path", "path": "$.order.status", "ends_with": "ped", **NOT},
     FAIL, [("$.order.status", 'expected not to end with "ped", got "shipped"')]),
    ("jp-ends-with-number", "json", {"type": "json_path", "path": "$.order.id", "ends_with": "42"}, FAIL,
     [("$.order.id", 'expected a string ending with "42", got integer 1042')]),
    ("jp-length", "json", {"type": "json_path", "path": "$.order.tags", "length": 2}, PASS, []),
    ("jp-length-fail", "json", {"type": "json_path", "path": "$.order.status", "length": 3}, FAIL,
     [("$.order.status", "expected length 3, got length 7")]),
    ("jp-length-template", "json", {"type": "json_path", "path": "$.items", "length": "{{ low }}"}, FAIL,
     [("$.items", "expected length 30, got length 3")]),
    ("jp-gt", "json", {"type": "json_path", "path": "$.order.id", "gt": 1000}, PASS, []),
    ("jp-gt-nodes", "json", {"type": "json_path", "path": "$.items[*].price", "gt": 4}, FAIL,
     [("$.items[2].price", "expected > 4, got 3")]),
    ("jp-gt-nodes-not", "json", {"type": "json_path", "path": "$.items[*].price", "gt": 4, **NOT}, FAIL,
     [("$.items[0].price", "expected not > 4, got 10"), ("$.items[1].price", "expected not > 4, got 5.5")]),
    ("jp-gte-template", "json", {"type": "json_path", "path": "$.order.total", "gte": "{{ low }}"}, PASS, []),
    ("jp-gte-template-text", "json", {"type": "json_path", "path": "$.order.total", "lte": "{{ high }}"}, PASS, []),
    ("jp-gte-template-wrong-type", "json", {"type": "json_path", "path": "$.order.total", "gte": "{{ word }}"},
     ERROR, [("$.order.total", "'gte' must be a number, got string \"abc\" (rendered from '{{ word }}')")]),
    ("jp-lt-fail", "json", {"type": "json_path", "path": "$.order.total", "lt": 34}, FAIL,
     [("$.order.total", "expected < 34, got 34.0")]),
    ("jp-lte", "json", {"type": "json_path", "path": "$.order.total", "lte": 34}, PASS, []),
    ("jp-gt-string-no-pass-under-not", "json", {"type": "json_path", "path": "$.order.status", "gt": 5, **NOT},
     FAIL, [("$.order.status", 'expected a number > 5, got string "shipped"')]),
    ("jp-between", "json", {"type": "json_path", "path": "$.items[*].price", "between": [3, 10]}, PASS, []),
    ("jp-between-fail", "json", {"type": "json_path", "path": "$.items[*].price", "between": [4, 10]}, FAIL,
     [("$.items[2].price", "expected between 4 and 10, got 3")]),
    ("jp-between-template", "json", {"type": "json_path", "path": "$.order.total",
                                     "between": ["{{ low }}", "{{ high }}"]}, PASS, []),
    ("jp-between-not", "json", {"type": "json_path", "path": "$.order.total", "between": [0, 10], **NOT}, PASS, []),
    ("jp-approx", "json", {"type": "json_path", "path": "$.order.total", "approx": 34.2}, PASS, []),
    ("jp-approx-fail", "json", {"type": "json_path", "path": "$.order.total", "approx": 35}, FAIL,
     [("$.order.total", "expected ≈ 35 (±1%), got 34.0 (off by 1)")]),
    ("jp-approx-abs", "json", {"type": "json_path", "path": "$.order.total", "approx": 34.4,
                               "tolerance": {"abs": 0.5}}, PASS, []),
    ("jp-approx-abs-fail", "json", {"type": "json_path", "path": "$.order.total", "approx": 34.4,
                                    "tolerance": {"abs": 0.1}}, FAIL, None),
    ("jp-approx-not", "json", {"type": "json_path", "path": "$.order.total", "approx": 34, **NOT}, FAIL,
     [("$.order.total", "expected not ≈ 34 (±1%), got 34.0")]),
    ("jp-one-of", "json", {"type": "json_path", "path": "$.order.status", "one_of": ["shipped", "delivered"]},
     PASS, []),
    ("jp-one-of-fail", "json", {"type": "json_path", "path": "$.order.status", "one_of": ["pending"]}, FAIL,
     [("$.order.status", 'expected one of ["pending"], got "shipped"')]),
    ("jp-one-of-template", "json", {"type": "json_path", "path": "$.order.tags[0]", "one_of": "{{ tags }}"}, PASS,
     []),
    ("jp-one-of-template-wrong-type", "json", {"type": "json_path", "path": "$.order.tags[0]",
                                               "one_of": "{{ word }}"}, ERROR, None),
    ("jp-json-type", "json", {"type": "json_path", "path": "$.order.id", "json_type": "integer"}, PASS, []),
    ("jp-json-type-fail", "json", {"type": "json_path", "path": "$.order.note", "json_type": "string"}, FAIL,
     [("$.order.note", "expected string, got null")]),
    ("jp-json-type-not", "json", {"type": "json_path", "path": "$.order.note", "json_type": "string", **NOT},
     PASS, []),
    # -- header ---------------------------------------------------------------------------------
    ("h-expected", "headers", {"type": "header", "header": "X-Count", "expected": "42"}, PASS, []),
    ("h-name-case-insensitive", "headers", {"type": "header", "header": "x-COUNT", "expected": "42"}, PASS, []),
    ("h-expected-types-kept", "headers", {"type": "header", "header": "X-Count", "expected": 42}, FAIL,
     [("headers['x-count']", 'expected integer 42, got string "42"')]),
    ("h-expected-template", "headers", {"type": "header", "header": "X-Count", "expected": "{{ count }}"}, PASS, []),
    ("h-matches", "headers", {"type": "header", "header": "X-Upstream", "matches": "^nginx/"}, PASS, []),
    ("h-matches-not-fail", "headers", {"type": "header", "header": "X-Upstream", "matches": "nginx/1\\.1", **NOT}, FAIL,
     [("headers['x-upstream']", 'expected not to match /nginx/1\\.1/, got "nginx/1.18.0"')]),
    ("h-exists", "headers", {"type": "header", "header": "X-Upstream", "exists": True}, PASS, []),
    ("h-exists-false", "headers", {"type": "header", "header": "X-Powered-By", "exists": False}, PASS, []),
    ("h-exists-false-fail", "headers", {"type": "header", "header": "X-Upstream", "exists": False}, FAIL,
     [("headers['x-upstream']", 'expected no header here, found "nginx/1.18.0"')]),
    ("h-exists-not-fail", "headers", {"type": "header", "header": "X-Powered-By", "exists": True}, FAIL,
     [("headers['x-powered-by']", "no header X-Powered-By in the response")]),
    ("h-missing-with-predicate", "headers", {"type": "header", "header": "X-Powered-By", "expected": "PHP", **NOT},
     FAIL, [("headers['x-powered-by']", "no header X-Powered-By in the response")]),
    ("h-contains-substring", "headers", {"type": "header", "header": "Content-Type", "contains": "charset"}, PASS,
     []),
    ("h-contains-list", "headers", {"type": "header", "header": "Vary", "contains": "Origin"}, PASS, []),
    ("h-contains-list-not", "headers", {"type": "header", "header": "Vary", "contains": "Cookie", **NOT}, PASS, []),
    ("h-contains-all-list", "headers", {"type": "header", "header": "Vary", "contains_all": ["Origin", "Accept"]},
     PASS, []),
    ("h-contains-any-fail", "headers", {"type": "header", "header": "Vary", "contains_any": ["Cookie", "Host"]},
     FAIL, [("headers['vary']", 'expected to contain any of ["Cookie", "Host"], got ["Accept", "Origin"]')]),
    ("h-length-list", "headers", {"type": "header", "header": "Vary", "length": 2}, PASS, []),
    ("h-every-value", "headers", {"type": "header", "header": "Vary", "matches": "^(Accept|Origin)$"}, PASS, []),
    ("h-every-value-fail", "headers", {"type": "header", "header": "Vary", "expected": "Accept"}, FAIL,
     [("headers['vary'][1]", 'expected "Accept", got "Origin"')]),
    ("h-every-value-not", "headers", {"type": "header", "header": "Vary", "starts_with": "X-", **NOT}, PASS, []),
    ("h-starts-with", "headers", {"type": "header", "header": "Content-Type", "starts_with": "text/plain"}, PASS,
     []),
    ("h-ends-with-fail", "headers", {"type": "header", "header": "Content-Type", "ends_with": "latin-1"}, FAIL,
     [("headers['content-type']", 'expected to end with "latin-1", got "text/plain; charset=utf-8"')]),
    ("h-gt-numeric-text", "headers", {"type": "header", "header": "X-Count", "gt": 41}, PASS, []),
    ("h-gte-template", "headers", {"type": "header", "header": "X-Count", "gte": "{{ low }}"}, PASS, []),
    ("h-lt-fail", "headers", {"type": "header", "header": "X-Count", "lt": 42}, FAIL,
     [("headers['x-count']", 'expected < 42, got "42"')]),
    ("h-lte-not-text", "headers", {"type": "header", "header": "X-Upstream", "lte": 5}, FAIL,
     [("headers['x-upstream']", 'expected a number <= 5, got string "nginx/1.18.0"')]),
    ("h-between", "headers", {"type": "header", "header": "X-Count", "between": [40, 45]}, PASS, []),
    ("h-approx", "headers", {"type": "header", "header": "X-Count", "approx": 42.3}, PASS, []),
    ("h-one-of", "headers", {"type": "header", "header": "X-Upstream", "one_of": ["nginx/1.18.0", "nginx/1.25.0"]},
     PASS, []),
    ("h-json-type", "headers", {"type": "header", "header": "X-Count", "json_type": "string"}, PASS, []),
    ("h-template-wrong-type", "headers", {"type": "header", "header": "X-Count", "between": ["{{ word }}", 50]},
     ERROR, [("headers['x-count']", "'between' must be a number, got string \"abc\" (rendered from '{{ word }}')")]),
    # -- cookie ---------------------------------------------------------------------------------
    ("c-attributes", "headers", {"type": "cookie", "cookie": "sid", "http_only": True, "secure": True,
                                 "same_site": "Strict", "path": "/", "domain": "example.test",
                                 "max_age_gte": 3600}, PASS, []),
    ("c-value", "headers", {"type": "cookie", "cookie": "sid", "starts_with": "s3cr3t-"}, PASS, []),
    ("c-value-fail-redacted", "headers", {"type": "cookie", "cookie": "sid", "expected": "other"}, FAIL,
     [("cookies['sid']", 'expected "other", got "***"')]),
    ("c-attributes-fail", "headers", {"type": "cookie", "cookie": "theme", "http_only": True, "secure": False,
                                      "same_site": "Strict", "path": "/", "max_age_gte": 60}, FAIL,
     [("cookies['theme'].http_only", "expected HttpOnly attribute, the cookie lacks it"),
      ("cookies['theme'].same_site", "expected SameSite=Strict, got SameSite=Lax"),
      ("cookies['theme'].path", 'expected Path=/, got "/app"')]),
    ("c-session-cookie-lifetime", "headers", {"type": "cookie", "cookie": "visits", "max_age_gte": 1}, FAIL,
     [("cookies['visits'].max_age", "expected to live >= 1 s, got a session cookie (no Max-Age or Expires)")]),
    ("c-value-and-attribute", "headers", {"type": "cookie", "cookie": "theme", "expected": "light",
                                          "same_site": "Lax"}, FAIL,
     [("cookies['theme']", 'expected "light", got "dark"')]),
    ("c-not", "headers", {"type": "cookie", "cookie": "theme", "expected": "light", **NOT}, PASS, []),
    ("c-template", "headers", {"type": "cookie", "cookie": "visits", "expected": "{{ count }}"}, PASS, []),
    ("c-numeric", "headers", {"type": "cookie", "cookie": "visits", "gte": 40}, PASS, []),
    ("c-missing", "headers", {"type": "cookie", "cookie": "cart", "secure": True}, FAIL,
     [("cookies['cart']", "the response sets no cookie cart (it sets sid, theme, visits)")]),
    ("c-exists-false", "headers", {"type": "cookie", "cookie": "cart", "exists": False}, PASS, []),
    ("c-exists-not-fail", "headers", {"type": "cookie", "cookie": "sid", "exists": True, **NOT}, FAIL,
     [("cookies['sid']", 'expected no cookie here, found "***"')]),
    ("c-template-wrong-type", "headers", {"type": "cookie", "cookie": "visits", "max_age_gte": "{{ word }}"},
     ERROR, None),
    # -- body -----------------------------------------------------------------------------------
    ("b-expected", "text", {"type": "body", "expected": TEXT}, PASS, []),
    ("b-expected-fail", "text", {"type": "body", "expected": "Order 1042 delayed"}, FAIL,
     [("$", 'expected "Order 1042 delayed", got "Order 1042 shipped"')]),
    ("b-matches", "text", {"type": "body", "matches": "\\d{4}"}, PASS, []),
    ("b-matches-not-fail", "text", {"type": "body", "matches": "ship", **NOT}, FAIL,
     [("$", 'expected not to match /ship/, got "Order 1042 shipped"')]),
    ("b-contains", "text", {"type": "body", "contains": "1042"}, PASS, []),
    ("b-contains-any", "text", {"type": "body", "contains_any": ["delayed", "shipped"]}, PASS, []),
    ("b-contains-all-fail", "text", {"type": "body", "contains_all": ["1042", "delivered"]}, FAIL,
     [("$", 'expected to contain all of ["1042", "delivered"], got "Order 1042 shipped" (missing "delivered")')]),
    ("b-starts-with-template", "text", {"type": "body", "starts_with": "{{ prefix }}"}, PASS, []),
    ("b-ends-with-fail", "text", {"type": "body", "ends_with": "delayed"}, FAIL,
     [("$", 'expected to end with "delayed", got "Order 1042 shipped"')]),
    ("b-length", "text", {"type": "body", "length": len(TEXT)}, PASS, []),
    ("b-one-of", "text", {"type": "body", "one_of": [TEXT, "x"]}, PASS, []),
    ("b-json-type", "text", {"type": "body", "json_type": "string"}, PASS, []),
    ("b-numeric-body", "number", {"type": "body", "between": [40, 45]}, PASS, []),
    ("b-numeric-body-gt-fail", "number", {"type": "body", "gt": 42}, FAIL, [("$", 'expected > 42, got "42"')]),
    ("b-numeric-body-approx", "number", {"type": "body", "approx": 42}, PASS, []),
    ("b-numeric-body-gte-lt-lte", "number", {"type": "body", "gte": 42}, PASS, []),
    ("b-numeric-body-lt", "number", {"type": "body", "lt": 43}, PASS, []),
    ("b-numeric-body-lte-not", "number", {"type": "body", "lte": 41, **NOT}, PASS, []),
    ("b-exists", "text", {"type": "body", "exists": True}, PASS, []),
    ("b-exists-false", "empty", {"type": "body", "exists": False}, PASS, []),
    ("b-exists-fail", "empty", {"type": "body", "exists": True}, FAIL, [("$", "the body is empty")]),
    ("b-exists-false-fail", "number", {"type": "body", "exists": False}, FAIL,
     [("$", 'expected no body here, found "42"')]),
    ("b-sha256", "text", {"type": "body", "sha256": hashlib.sha256(TEXT.encode()).hexdigest().upper()}, PASS, []),
    ("b-sha256-fail", "text", {"type": "body", "sha256": "0" * 64}, FAIL,
     [("sha256", f'expected "{"0" * 64}", got "{hashlib.sha256(TEXT.encode()).hexdigest()}"')]),
    ("b-size-lte", "text", {"type": "body", "size_lte": len(TEXT)}, PASS, []),
    ("b-size-lte-fail", "text", {"type": "body", "size_lte": 5}, FAIL, [("size", "expected <= 5, got 18")]),
    ("b-size-gte-template", "text", {"type": "body", "size_gte": "{{ low }}"}, FAIL,
     [("size", "expected >= 30, got 18")]),
    ("b-size-not", "text", {"type": "body", "size_gte": 100, **NOT}, PASS, []),
    # -- xpath: HTML ----------------------------------------------------------------------------
    ("x-expected", "html", {"type": "xpath", "path": "//title", "expected": "Invoice 1042"}, PASS, []),
    ("x-element-text", "html", {"type": "xpath", "path": "//li[1]", "expected": "Coffee x2"}, PASS, []),
    ("x-nodes-fail", "html", {"type": "xpath", "path": "//ul/li", "matches": "^(Coffee|Mug)"}, FAIL,
     [("/html/body/ul/li[3]", 'expected to match /^(Coffee|Mug)/, got "Filters"')]),
    ("x-nodes-not", "html", {"type": "xpath", "path": "//ul/li", "contains": "Tea", **NOT}, PASS, []),
    ("x-contains-any-nodes-fail", "html", {"type": "xpath", "path": "//ul/li", "contains_any": ["Coffee", "Mug"]},
     FAIL, [("/html/body/ul/li[3]", 'expected to contain any of ["Coffee", "Mug"], got "Filters"')]),
    ("x-contains-all", "html", {"type": "xpath", "path": "//title", "contains_all": ["Invoice", "1042"]}, PASS, []),
    ("x-attribute-fail", "html", {"type": "xpath", "path": "//a/@href", "expected": "/orders/1043"}, FAIL,
     [("/html/body/a/@href", 'expected "/orders/1043", got "/orders/1042"')]),
    ("x-count", "html", {"type": "xpath", "path": "count(//li)", "expected": 3}, PASS, []),
    ("x-count-fail", "html", {"type": "xpath", "path": "count(//li)", "gt": 3}, FAIL,
     [("count(//li)", "expected > 3, got 3")]),
    ("x-number-approx", "html", {"type": "xpath", "path": "number(//span[@id='total'])", "approx": 34}, PASS, []),
    ("x-text-numeric", "html", {"type": "xpath", "path": "//span[@id='total']", "between": ["{{ low }}", 40]},
     PASS, []),
    ("x-boolean", "html", {"type": "xpath", "path": "boolean(//form)", "expected": False}, PASS, []),
    ("x-string", "html", {"type": "xpath", "path": "string(//title)", "starts_with": "Invoice"}, PASS, []),
    ("x-exists", "html", {"type": "xpath", "path": "//li[@class='line']", "exists": True}, PASS, []),
    ("x-exists-false-fail", "html", {"type": "xpath", "path": "//li[2]", "exists": False}, FAIL,
     [("/html/body/ul/li[2]", 'expected no node here, found "Mug"')]),
    ("x-no-node", "html", {"type": "xpath", "path": "//table", "expected": "x"}, FAIL,
     [("//table", "no node matches")]),
    ("x-ends-with", "html", {"type": "xpath", "path": "//title", "ends_with": "42"}, PASS, []),
    ("x-length", "html", {"type": "xpath", "path": "//title", "length": 12}, PASS, []),
    ("x-one-of", "html", {"type": "xpath", "path": "//li[2]", "one_of": ["Mug", "Cup"]}, PASS, []),
    ("x-lte", "html", {"type": "xpath", "path": "count(//li)", "lte": 3}, PASS, []),
    ("x-gte-not-fail", "html", {"type": "xpath", "path": "//span[@id='total']", "gte": 34, **NOT}, FAIL,
     [("/html/body/p/span", 'expected not >= 34, got "34.00"')]),
    ("x-json-type", "html", {"type": "xpath", "path": "count(//li)", "json_type": "number"}, PASS, []),
    ("x-html-as-xml-error", "html", {"type": "xpath", "path": "//title", "exists": True, "document": "xml"}, ERROR,
     None),
    # -- xpath: XML -----------------------------------------------------------------------------
    ("x-xml-namespaces-fail", "xml", {"type": "xpath", "path": "//p:price", "namespaces": {"p": "urn:demo:price"},
                                      "gt": 10}, FAIL, [("/catalog/product[2]/p:price", 'expected > 10, got "9.00"')]),
    ("x-xml-attributes", "xml", {"type": "xpath", "path": "//product/@sku", "one_of": ["COF-250", "MUG-01"]}, PASS,
     []),
    ("x-xml-template", "xml", {"type": "xpath", "path": "//product[1]/@sku", "expected": "{{ sku }}"}, PASS, []),
    ("x-xml-lt", "xml", {"type": "xpath", "path": "count(//product)", "lt": 2}, FAIL,
     [("count(//product)", "expected < 2, got 2")]),
    # -- extract_match --------------------------------------------------------------------------
    ("e-expected", "json", {"type": "extract_match", "variable": "order_id", "expected": 1042}, PASS, []),
    ("e-expected-not-fail", "json", {"type": "extract_match", "variable": "order_id", "expected": 1042, **NOT},
     FAIL, [("order_id", "expected not 1042, got 1042")]),
    ("e-matches-number", "json", {"type": "extract_match", "variable": "order_id", "matches": "^10\\d\\d$"}, PASS, []),
    ("e-gte-template", "json", {"type": "extract_match", "variable": "order_id", "gte": "{{ low }}"}, PASS, []),
    ("e-between-fail", "json", {"type": "extract_match", "variable": "order_id", "between": [1, 10]}, FAIL,
     [("order_id", "expected between 1 and 10, got 1042")]),
    ("e-contains", "json", {"type": "extract_match", "variable": "order_tags", "contains": "gift"}, PASS, []),
    ("e-contains-any", "json", {"type": "extract_match", "variable": "order_tags", "contains_any": ["x", "gift"]},
     PASS, []),
    ("e-contains-all-fail", "json", {"type": "extract_match", "variable": "status", "contains_all": ["ship", "ok"]},
     FAIL, [("status", 'expected to contain all of ["ship", "ok"], got "shipped" (missing "ok")')]),
    ("e-length", "json", {"type": "extract_match", "variable": "order_tags", "length": 2}, PASS, []),
    ("e-ends-with", "json", {"type": "extract_match", "variable": "status", "ends_with": "ped"}, PASS, []),
    ("e-starts-with-fail", "json", {"type": "extract_match", "variable": "status", "starts_with": "x"}, FAIL,
     [("status", 'expected to start with "x", got "shipped"')]),
    ("e-gt", "json", {"type": "extract_match", "variable": "order_id", "gt": 1041}, PASS, []),
    ("e-lt-not", "json", {"type": "extract_match", "variable": "order_id", "lt": 1000, **NOT}, PASS, []),
    ("e-lte-fail", "json", {"type": "extract_match", "variable": "order_id", "lte": 1000}, FAIL,
     [("order_id", "expected <= 1000, got 1042")]),
    ("e-one-of", "json", {"type": "extract_match", "variable": "status", "one_of": ["shipped"]}, PASS, []),
    ("e-json-type", "json", {"type": "extract_match", "variable": "order_tags", "json_type": "array"}, PASS, []),
    ("e-approx", "json", {"type": "extract_match", "variable": "order_id", "approx": 1040, "tolerance": 0.01}, PASS,
     []),
    ("e-never-extracted", "json", {"type": "extract_match", "variable": "missing_value", "exists": True}, FAIL,
     [("missing_value", "variable 'missing_value' was never extracted")]),
    ("e-exists-false", "json", {"type": "extract_match", "variable": "missing_value", "exists": False}, PASS, []),
]

ROUTES = {"json": "/json", "headers": "/headers", "text": "/text", "number": "/number", "empty": "/empty",
          "html": "/page.html", "xml": "/feed.xml"}
EXTRACT = {"json": {"order_id": {"json_path": "$.order.id"}, "order_tags": {"json_path": "$.order.tags"},
                    "status": {"json_path": "$.order.status"}, "missing_value": {"json_path": "$.order.gone"}}}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("predicates")
    steps = []
    for step, route in ROUTES.items():
        assertions = [{"name": case, **fields} for case, on, fields, _, _ in CASES if on == step]
        steps.append({"name": step, "request": {"url": route}, "extract": EXTRACT.get(step, {}),
                      "assertions": assertions})
    with Target() as target:
        target.json("/json", ORDER)
        target.route("/headers", lambda req: (200, HEADERS, b"ok"))
        target.text("/text", TEXT)
        target.text("/number", "42")
        target.text("/empty", "")
        target.text("/page.html", HTML, content_type="text/html; charset=utf-8")
        target.text("/feed.xml", XML, content_type="application/xml")
        done, data = run_suite(root, suite_of(steps, VARIABLES), target.base_url)
    assert done.returncode == 0, done.stdout + done.stderr  # --fail-on never: the run itself worked
    return root, data


@pytest.mark.parametrize("case, step, fields, status, expected", CASES, ids=[c[0] for c in CASES])
def test_predicate(results, case, step, fields, status, expected):
    outcome = outcomes(results[1])[case]
    assert outcome["status"] == status, outcome
    if expected is not None:
        assert [(m["path"], m["reason"]) for m in outcome["mismatches"]] == expected


def test_every_predicate_is_covered_on_every_type_it_applies_to():
    from litmus.assertions import predicates

    used: dict[str, set[str]] = {}
    for _, _, fields, _, _ in CASES:
        used.setdefault(fields["type"], set()).update(fields)
    for type_name in ("json_path", "header", "body", "xpath", "extract_match"):
        assert set(predicates.KEYS) | {"not"} <= used[type_name], (type_name, set(predicates.KEYS) - used[type_name])
    assert {"expected", "starts_with", "gte", "exists", "not", "secure", "http_only", "same_site", "domain", "path",
            "max_age_gte"} <= used["cookie"]


def test_secure_and_http_only_cookie_values_never_reach_an_output(results):
    root, _ = results
    for path in (root / "out").iterdir():
        assert "s3cr3t-sid-value" not in path.read_text(), path
    # A cookie that is neither HttpOnly nor Secure stays readable in the findings.
    assert json.dumps("dark") in (root / "out" / "results.json").read_text()
