import io

from litmus.github.workflow import WorkflowCommands, command_line, escape_data, escape_property


def test_escaping_follows_the_toolkit():
    assert escape_data("50%\r\ndone") == "50%25%0D%0Adone"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert escape_data("a:b,c") == "a:b,c"


def test_annotation_line_has_escaped_properties_and_message():
    line = command_line("error", "line1\nline2", {"title": "Suite › flow: a, b", "file": "probes/x.yaml",
                                                  "line": 12, "col": 7})
    assert line == "::error title=Suite › flow%3A a%2C b,file=probes/x.yaml,line=12,col=7::line1%0Aline2"


def test_empty_properties_are_left_out():
    assert command_line("warning", "m", {"file": None, "line": None}) == "::warning::m"


def test_mask_registers_each_value_and_each_line_once():
    out = io.StringIO()
    commands = WorkflowCommands(out)
    commands.mask(["tok", None, "", "tok", "first\nsecond"])
    commands.mask(["tok", "second"])
    assert out.getvalue().splitlines() == [
        "::add-mask::tok", "::add-mask::first%0Asecond", "::add-mask::first", "::add-mask::second",
    ]


def test_untrusted_text_is_fenced_by_a_random_stop_token():
    out = io.StringIO()
    commands = WorkflowCommands(out)
    commands.echo_untrusted("::add-mask::x\n::error::injected")
    commands.echo_untrusted("again")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("::stop-commands::")
    token = lines[0].removeprefix("::stop-commands::")
    assert len(token) >= 32 and lines[1:4] == ["::add-mask::x", "::error::injected", f"::{token}::"]
    assert lines[4] != lines[0]  # a fresh token each time, so the text cannot guess it


def test_log_lines_never_read_as_commands():
    out = io.StringIO()
    commands = WorkflowCommands(out)
    commands.log("plain\nlines")
    commands.log("  ::error::not really\nfine")
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["plain", "lines"]
    assert lines[2].startswith("::stop-commands::") and lines[3:5] == ["  ::error::not really", "fine"]
    assert lines[5] == "::" + lines[2].removeprefix("::stop-commands::") + "::"


def test_group_is_closed_even_on_error():
    out = io.StringIO()
    commands = WorkflowCommands(out)
    try:
        with commands.group("Run: a, b"):
            raise RuntimeError
    except RuntimeError:
        pass
    assert out.getvalue().splitlines() == ["::group::Run: a, b", "::endgroup::"]
