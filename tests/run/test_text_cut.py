"""`litmus.text.clip`: the one cut, whose mark the redactor recognises."""

from litmus.run.redact import Redactor
from litmus.text import MARK, clip

SECRET = "sk-live-0123456789abcdef"


def test_clip_keeps_text_that_fits_and_cuts_the_rest_to_the_limit_with_the_mark():
    assert clip("short", 5) == "short"
    assert clip("abcdefgh", 5) == "abcd" + MARK
    assert len(clip("x" * 1000, 80)) == 80


def test_a_secret_cut_by_clip_leaves_no_fragment_after_redaction():
    redactor = Redactor()
    redactor.register(SECRET)
    text = "token=" + SECRET + " and more"
    for limit in range(10, len(text)):
        shown = redactor.redact(clip(text, limit))
        assert SECRET[:4] not in shown, (limit, shown)
