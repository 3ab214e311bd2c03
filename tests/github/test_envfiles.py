import re

from litmus.github.envfiles import SUMMARY_LIMIT_BYTES, append_summary, fit_summary, write_outputs
from support.fake_github import parse_output_file


def test_outputs_single_and_multi_line(tmp_path):
    path = tmp_path / "output"
    path.write_text("earlier=1\n")
    write_outputs(path, {"verdict": "failed", "passed": 3, "empty": None, "summary": "a\nb=c\n<<x"})
    text = path.read_text()
    assert re.search(r"^summary<<ghadelimiter_[0-9a-f-]{36}$", text, re.M)
    assert parse_output_file(text) == {"earlier": "1", "verdict": "failed", "passed": "3", "empty": "",
                                       "summary": "a\nb=c\n<<x"}


def test_summary_appends_and_respects_the_limit(tmp_path):
    path = tmp_path / "summary.md"
    append_summary(path, "# one")
    append_summary(path, "two")
    assert path.read_text() == "# one\ntwo\n"
    big = "| a |\n|---|\n" + "| row |\n" * (SUMMARY_LIMIT_BYTES // 4)
    cut = fit_summary(big)
    assert len(cut.encode()) <= SUMMARY_LIMIT_BYTES
    assert cut.endswith("The whole report is in the uploaded report folder.\n")
    # One table longer than the limit is cut between its rows, not dropped whole.
    assert len(cut.encode()) > SUMMARY_LIMIT_BYTES - 300
    assert "| row |\n\n---\n\n✂️ **Cut at GitHub's 1 MiB limit" in cut
