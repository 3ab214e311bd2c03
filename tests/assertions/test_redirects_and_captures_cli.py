"""The final URL and the redirect count (assertion types `url` and `redirects`), and the captures
`xpath`, `cookie`, `url` and `redirects`, through `litmus run` against a real target on 127.0.0.1:
each passing and each failing as it should, and a captured session cookie printed nowhere."""

from __future__ import annotations

import pytest
from harness import HeaderLines, outcomes, run_suite, suite_of

from support.target import Target

FORM = ("<html><body><form action='/login' method='post'><input type='hidden' name='csrf' value='tok-81f2'>"
        "<input name='user'></form><ul><li>a</li><li>b</li></ul></body></html>")
SESSION = "sess-9c1d77e0a4"
FINAL = HeaderLines([("Content-Type", "text/html; charset=utf-8"), ("Set-Cookie", f"sid={SESSION}; Path=/"),
                     ("Set-Cookie", "lang=en")])
NOT = {"not": True}
PASS, FAIL = "passed", "failed"

# (case id, assertion fields on the redirected step, status, [(path, reason)])
CASES = [
    ("url-ends-with", {"type": "url", "ends_with": "/final?from=middle"}, PASS, []),
    ("url-template", {"type": "url", "expected": "{{ landing }}"}, PASS, []),
    ("url-fail", {"type": "url", "ends_with": "/start"}, FAIL,
     [("url", 'expected to end with "/start", got "{base}/final?from=middle"')]),
    ("url-not-fail", {"type": "url", "contains": "/final", **NOT}, FAIL,
     [("url", 'expected not to contain "/final", got "{base}/final?from=middle"')]),
    ("redirects-expected", {"type": "redirects", "expected": 2}, PASS, []),
    ("redirects-fail", {"type": "redirects", "lte": 1}, FAIL, [("redirects", "expected <= 1, got 2")]),
    ("redirects-not", {"type": "redirects", "expected": 0, **NOT}, PASS, []),
    ("captured-csrf", {"type": "extract_match", "variable": "csrf", "expected": "tok-81f2"}, PASS, []),
    ("captured-items", {"type": "extract_match", "variable": "items", "expected": ["a", "b"]}, PASS, []),
    ("captured-count", {"type": "extract_match", "variable": "item_count", "expected": 2}, PASS, []),
    ("captured-lang", {"type": "extract_match", "variable": "lang", "expected": "en"}, PASS, []),
    ("captured-sid", {"type": "extract_match", "variable": "sid", "starts_with": "sess-"}, PASS, []),
    ("captured-final", {"type": "extract_match", "variable": "final", "ends_with": "/final?from=middle"}, PASS, []),
    ("captured-hops", {"type": "extract_match", "variable": "hops", "expected": 2}, PASS, []),
    ("captured-missing-cookie", {"type": "extract_match", "variable": "cart", "exists": True}, FAIL,
     [("cart", "variable 'cart' was never extracted")]),
    ("captured-no-node", {"type": "extract_match", "variable": "absent", "exists": True}, FAIL,
     [("absent", "variable 'absent' was never extracted")]),
]
EXTRACT = {
    "csrf": {"xpath": "string(//input[@name='csrf']/@value)"}, "items": {"xpath": "//li"},
    "item_count": {"xpath": "count(//li)"}, "lang": {"cookie": "lang"}, "sid": {"cookie": "sid"},
    "final": {"url": True}, "hops": {"redirects": True}, "cart": {"cookie": "cart"}, "absent": {"xpath": "//table"},
}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("redirects")
    with Target() as target:
        target.route("/start", lambda req: (302, {"Location": "/middle"}, b""))
        target.route("/middle", lambda req: (301, {"Location": "/final?from=middle"}, b""))
        target.route("/final", lambda req: (200, FINAL, FORM.encode()))
        target.route("/echo", lambda req: (200, {"Content-Type": "text/plain"}, req.headers.get("X-Sid", "").encode()))
        steps = [
            {"name": "follow", "request": {"url": "/start"}, "extract": EXTRACT,
             "assertions": [{"name": case, **fields} for case, fields, _, _ in CASES]},
            {"name": "unfollowed", "request": {"url": "/start", "follow_redirects": False},
             "extract": {"stay": {"url": True}},
             "assertions": [{"name": "unfollowed-zero", "type": "redirects", "expected": 0},
                            {"name": "unfollowed-url", "type": "url", "ends_with": "/start"},
                            {"name": "unfollowed-count-fail", "type": "redirects", "gte": 1}]},
            {"name": "send the captures", "request": {"url": "/echo", "headers": {"X-Sid": "{{ sid }}"}},
             "assertions": [{"name": "sid-sent", "type": "body", "expected": SESSION}]},
        ]
        done, data = run_suite(root, suite_of(steps, {"landing": f"{target.base_url}/final?from=middle"}),
                               target.base_url)
    assert done.returncode == 0, done.stdout + done.stderr
    return root, data, target.base_url, done


@pytest.mark.parametrize("case, fields, status, expected", CASES, ids=[c[0] for c in CASES])
def test_redirected_step(run, case, fields, status, expected):
    outcome = outcomes(run[1])[case]
    assert outcome["status"] == status, outcome
    base = run[2]
    assert [(m["path"], m["reason"]) for m in outcome["mismatches"]] == [
        (path, reason.format(base=base)) for path, reason in expected]


def test_an_unfollowed_redirect_is_zero_hops_at_its_own_url(run):
    found = outcomes(run[1])
    assert found["unfollowed-zero"]["status"] == PASS and found["unfollowed-url"]["status"] == PASS
    assert found["unfollowed-count-fail"]["status"] == FAIL
    assert [m["reason"] for m in found["unfollowed-count-fail"]["mismatches"]] == ["expected >= 1, got 0"]


def test_a_captured_cookie_is_sent_on_and_printed_nowhere(run):
    root, _, _, done = run
    assert outcomes(run[1])["sid-sent"]["status"] == PASS
    assert SESSION not in done.stdout + done.stderr
    for path in (root / "out").iterdir():
        assert SESSION not in path.read_text(), path
