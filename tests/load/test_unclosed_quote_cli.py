"""An unclosed quote is reported where it opens (file:line:col), saying where the YAML scanner gave up:
not at the end of the file, where PyYAML's own error points."""

from __future__ import annotations

import pytest

from support.cli import litmus

SUITE = """\
version: 1
suite: Orders
flows:
  - name: place
    steps:
      - name: post
        request: {url: "/orders}
        assertions:
          - {type: status_code, expected: 201}
"""


@pytest.mark.parametrize(("quote", "tail", "gave_up"), [
    ('"', "", "s.yaml:10:1, the end of the file"),
    ("'", "---\nversion: 1\n", "s.yaml:10:1, a document marker (--- or ...)"),
])
def test_an_unclosed_quote_is_reported_where_it_opens(tmp_path, quote, tail, gave_up):
    (tmp_path / ".git").mkdir()
    (tmp_path / "s.yaml").write_text(SUITE.replace('"/orders}', f'{quote}/orders}}') + tail)
    done = litmus(tmp_path, "validate", "s.yaml")
    assert done.returncode == 2
    assert (f"s.yaml:7:24: error: invalid YAML: this quoted string is never closed (the scanner looked for its "
            f"closing quote up to {gave_up})") in done.stderr
    assert f"request: {{url: {quote}/orders}}" in done.stderr  # the source line of the opening quote is shown


def test_other_yaml_errors_keep_their_own_position(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "s.yaml").write_text('version: 1\nsuite: "bad \\q escape"\n')
    done = litmus(tmp_path, "validate", "s.yaml")
    assert done.returncode == 2
    assert "s.yaml:2:13: error: invalid YAML: while parsing a quoted scalar found unknown escape" in done.stderr
