"""The masking pass: every encoding of a secret, fragments left by cuts, free text only."""

from __future__ import annotations

import base64
import dataclasses
import html
import json
from urllib.parse import quote, quote_plus

import pytest
import requests

from litmus import results
from litmus.results import (
    AssertionOutcome,
    FlowRunResult,
    IntentEvaluation,
    Mismatch,
    RequestExcerpt,
    ResponseExcerpt,
    RunInfo,
    RunResult,
    StepResult,
    SuiteResult,
    validate,
)
from litmus.run.redact import FREE_TEXT, MASK, STRUCTURE, Redactor

SECRET = 'pass word/1"+%é<x>'


def redactor(*secrets: str, warnings: list[str] | None = None) -> Redactor:
    r = Redactor(on_warning=None if warnings is None else warnings.append)
    for i, secret in enumerate(secrets):
        r.register(secret, name=f"S{i}")
    return r


@pytest.mark.parametrize("form", [
    SECRET,
    quote(SECRET, safe=""),
    quote(SECRET, safe="").lower(),
    quote(SECRET),  # `/` kept
    quote_plus(SECRET),
    requests.utils.requote_uri(SECRET),
    json.dumps(SECRET)[1:-1],
    json.dumps(SECRET, ensure_ascii=False)[1:-1],
    json.dumps(SECRET)[1:-1].replace("/", "\\/"),
    json.dumps(SECRET)[1:-1].replace("\\u00e9", "\\u00E9"),
    repr(SECRET)[1:-1],
    html.escape(SECRET),
    base64.b64encode(SECRET.encode()).decode(),
    base64.urlsafe_b64encode(SECRET.encode()).decode().rstrip("="),
])
def test_every_encoding_of_a_secret_is_masked(form):
    masked = redactor(SECRET).redact(f"before {form} after")
    assert masked == f"before {MASK} after"


def test_the_basic_form_of_the_github_token_the_action_sends_is_masked():
    token = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    assert redactor(token).redact(f"AUTHORIZATION: basic {basic}").count(MASK) == 1
    assert basic[8:-8] not in redactor(token).redact(basic)


def test_a_secret_pasted_with_a_trailing_newline_is_masked_as_repr_shows_it_and_stripped():
    r = redactor("tok-value-1\n")
    assert r.redact(f"invalid header value {'tok-value-1' + chr(10)!r}") == f"invalid header value '{MASK}'"
    assert r.redact("sent tok-value-1") == f"sent {MASK}"


def test_a_secret_in_a_repr_that_escapes_both_quotes_is_masked_whole():
    secret = "it's-a-secret"
    shown = repr(f'{secret} "quoted"')  # both quotes: repr escapes the single one
    assert redactor(secret).redact(shown) == repr('*** "quoted"').replace("***", MASK)


def test_a_json_body_escaped_again_inside_a_json_string_is_masked():
    secret = 'to"k/en<1>'
    inner = json.dumps({"token": secret})
    outer = json.dumps({"body": inner})
    assert secret not in redactor(secret).redact(outer).replace(MASK, "")
    assert redactor(secret).redact(outer) == json.dumps({"body": json.dumps({"token": "***"})}).replace("***", MASK)


def test_the_pieces_a_raw_url_splits_a_secret_into_are_masked():
    # `url: "/x?raw={{ secrets.TOK }}"`: `&` ends the value the target reads, and requests moves the
    # `#fragment` behind the query it appends.
    r = redactor("head-part&tail#frag-ment&x")
    assert r.redact("/x?raw=head-part&q=1#frag-ment&x") == f"/x?raw={MASK}&q=1#{MASK}"
    assert r.redact("read: tail, x") == f"read: {MASK}, x"  # pieces under 4 characters are no secret


def test_a_secret_inside_longer_base64_such_as_basic_credentials_is_masked():
    secret = "hunter2-hunter2"
    for user in ("u", "us", "use"):  # each alignment of the secret inside the encoded text
        token = base64.b64encode(f"{user}:{secret}".encode()).decode()
        masked = redactor(secret).redact(f"Basic {token}")
        assert MASK in masked and token not in masked


@pytest.mark.parametrize(("text", "cut"), [
    ("tok=SUPERSECR…", False),  # show(): cut, then an ellipsis
    ("body: 'tok=SUPERSECR'…", False),  # describe_body: repr of the cut head, then the ellipsis
    ("tok=SUPERSECR… (1400 characters)", False),  # bounded()
    ("response\ntok=SUPERSECR\n[… 5 more characters cut by Litmus]", False),  # the judged text
    ("…RSECRET-99 and more", False),  # a window cut at its start
    ("excerpt ends tok=SUPERSEC", True),  # an excerpt known to be cut at its end
])
def test_a_fragment_left_by_a_cut_is_masked(text, cut):
    masked = redactor("SUPERSECRET-99").redact(text, cut=cut)
    assert "SUPERSEC" not in masked and "RSECRET" not in masked
    assert MASK in masked


def test_text_that_only_ends_like_a_secret_starts_is_kept_when_nothing_was_cut():
    assert redactor("SUPERSECRET-99").redact("ends with SUPERSEC") == "ends with SUPERSEC"


def test_a_short_secret_is_masked_with_one_warning_naming_it_not_its_value():
    warnings: list[str] = []
    r = Redactor(on_warning=warnings.append)
    r.register("e", name="TOK")
    r.register("e", name="TOK")
    assert r.redact("here") == f"h{MASK}r{MASK}"
    assert len(warnings) == 1 and "TOK" in warnings[0] and "'e'" not in warnings[0]


def test_a_secret_that_contains_another_is_masked_whole():
    assert redactor("abcd", "abcdefgh").redact("xabcdefghx") == f"x{MASK}x"


def _document() -> RunResult:
    outcome = AssertionOutcome(type="status_code", status="error", reason="no response: e error",
                               line=3, column=5, name="status", mismatches=[
                                   Mismatch(path="$", expected={"e": "e"}, actual=["e"], reason="e")])
    step = StepResult(
        name="send", line=2, status="error", error="connection refused (e)",
        request=RequestExcerpt(method="GET", url="http://127.0.0.1/?k=e", headers={"X-Token": "e"}, body="e"),
        response=ResponseExcerpt(status=500, elapsed_ms=1.0, headers={"X": "e"}, body="e"),
        extracted={"echoed": "e"}, assertions=[outcome])
    flow_run = FlowRunResult(flow="flow", line=1, run_index=0, steps=[step],
                             intent_evaluation=IntentEvaluation(status="failed", method="deterministic", reason="e"))
    suite = SuiteResult(name="Suite", file="probes/e.yaml", line=1, pass_threshold=100, pass_rate=0.0,
                        verdict="failed", intent="e", flow_runs=[flow_run])
    return RunResult(run=RunInfo(base_url="http://e", started_at="2026-01-01T00:00:00.000+00:00",
                                 finished_at="2026-01-01T00:00:01.000+00:00"), verdict="failed", suites=[suite])


@pytest.mark.parametrize("secret", ["e", "error", "failed", "status", "passed", "deterministic", "$"])
def test_structural_fields_are_never_masked(secret):
    result = _document()
    before = result.to_dict()
    redactor(secret).redact_in_place(result)
    after = result.to_dict()
    assert validate(after) == []
    suite, step = after["suites"][0], after["suites"][0]["flow_runs"][0]["steps"][0]
    assert (after["verdict"], suite["verdict"], step["status"], step["assertions"][0]["status"]) == \
        ("failed", "failed", "error", "error")
    assert step["assertions"][0]["type"] == "status_code" and suite["file"] == "probes/e.yaml"
    assert suite["flow_runs"][0]["intent_evaluation"]["method"] == "deterministic"
    assert set(after) == set(before)
    if secret == "e":  # free text is masked, keys of the data too
        assert step["error"] == f"conn{MASK}ction r{MASK}fus{MASK}d ({MASK})"
        assert step["assertions"][0]["mismatches"][0]["expected"] == {MASK: MASK}
        assert step["request"]["headers"] == {"X-Token": MASK}
        assert step["extracted"] == {"echoed": MASK}  # the probe's variable names are kept


def test_only_http_only_or_secure_cookie_values_are_registered():
    from litmus.assertions.cookie import protected_values

    r = Redactor()
    r.register_cookie_values(protected_values([
        "sid=session-value-1; Path=/; HttpOnly", "csrf=secure-value-2; Secure", "theme=dark-mode-3", "k=abc; Secure"]))
    assert r.redact("session-value-1 secure-value-2 dark-mode-3 abc") == f"{MASK} {MASK} dark-mode-3 abc"


def test_every_field_of_the_results_document_is_classified_as_structure_free_text_or_nesting():
    """A field added to litmus.results is masked until classified; this says which one to classify."""
    unclassified = []
    for cls in vars(results).values():
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == results.__name__:
            nested = {name for owner, name in results._NESTED if owner is cls}
            for f in dataclasses.fields(cls):
                known = [f.name in STRUCTURE.get(cls, ()), f.name in FREE_TEXT.get(cls, ()), f.name in nested]
                if sum(known) != 1:
                    unclassified.append(f"{cls.__name__}.{f.name}")
    assert unclassified == []
