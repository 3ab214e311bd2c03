"""Building a validated `Suite` from one file's positioned YAML tree.

Every problem is recorded in the collector (the build goes on, so one run reports all of a file's
problems); the caller discards the suite when the collector holds errors.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from litmus import files, git
from litmus.assertions import all_specs, predicates, status_code
from litmus.assertions.base import AssertionSpec, FieldSpec
from litmus.errors import Position
from litmus.files import MAX_FILE_BYTES
from litmus.load import checks, tool_calls
from litmus.load.data_rows import RowError, rows, too_deep
from litmus.load.diagnostics import Collector, Span
from litmus.load.fields import Fields, describe
from litmus.load.source import MAX_DEPTH, Item, SourceError, parse_yaml
from litmus.load.templates import FileScenarios, Scope, check_templates, variable_sizes
from litmus.model import (
    COOKIE_NAME,
    COOKIE_VALUE_REFUSED,
    MISSING,
    Assertion,
    Auth,
    Context,
    Conversation,
    ConversationFormat,
    Extraction,
    Flow,
    GraphQL,
    MultipartPart,
    RateLimit,
    Request,
    Retry,
    Scenario,
    Simulate,
    Step,
    Stream,
    Suite,
    SuiteJudge,
    Tls,
    UsagePaths,
)
from litmus.templating import TEMPLATE
from litmus.text import did_you_mean, with_article
from litmus.trust import Trust

SUITE_KEYS = ("version", "suite", "intent", "pass_threshold", "base_url", "defaults", "variables", "judge",
              "context", "flows", "setup", "teardown", "serial", "openapi", "rate_limit")
BODY_KEYS = ("json", "body", "form", "multipart", "graphql", "body_file")
REQUEST_KEYS = ("method", "url", "headers", "cookies", "query", *BODY_KEYS, "auth", "tls", "delay_ms",
                "timeout_ms", "follow_redirects", "stream", "retry_on_429", "usage", "pricing_model")
AUTH_KINDS = ("basic", "digest", "bearer")
TLS_KEYS = ("verify", "ca_file", "client_cert", "client_key")
# What marks a PEM file that holds a private key (a client_cert file may hold its key too), and one whose key
# is encrypted: OpenSSL would ask for its passphrase on the terminal, and a local run would wait there.
PRIVATE_KEY_MARK = b"PRIVATE KEY-----"
ENCRYPTED_KEY_MARKS = (b"ENCRYPTED PRIVATE KEY-----", b"Proc-Type: 4,ENCRYPTED")
STREAM_FORMATS = ("sse", "ndjson", "openai", "anthropic")
STREAM_KEYS = ("format", "text_path", "done")
USAGE_KEYS = ("input_path", "output_path")
DEFAULTS_KEYS = ("headers", "cookies", "query", "auth", "tls", "delay_ms", "timeout_ms", "follow_redirects",
                 "retry_on_429")
RATE_LIMIT_KEYS = ("per_second", "per_minute", "burst")
MULTIPART_FILE_KEYS = ("file", "content_type", "filename")
MULTIPART_VALUE_KEYS = ("value", "content_type")
# `runs` above this is a typo rather than a plan (and 1e8 flow runs would not fit in memory).
MAX_RUNS = 10_000
STEP_KEYS = ("name", "request", "extract", "retry", "assertions", "skip")
CONVERSATION_STEP_KEYS = (*STEP_KEYS, "user", "simulate", "tool_results")
FLOW_KEYS = ("name", "runs", "steps", "conversation", "conversation_assertions", "skip", "scenarios",
             "scenarios_file")
CONVERSATION_KEYS = ("request", "format", "system")
CONVERSATION_APIS = ("openai", "anthropic")
MAPPING_FORMAT_KEYS = ("history_path", "reply_path", "history")
# What a conversation step's own `request` may change: the conversation fixes where and how it is sent.
CONVERSATION_OVERRIDE_KEYS = ("headers", "cookies", "query", "json", "auth", "delay_ms", "timeout_ms",
                              "follow_redirects", "retry_on_429")
SIMULATE_KEYS = ("persona", "goal", "max_turns")
# A simulated stretch longer than this is a runaway loop rather than a test (each turn is a simulator call).
MAX_SIMULATED_TURNS = 50
# The body keys Litmus fills with the history, per API.
HISTORY_KEYS = {"openai": ("messages",), "anthropic": ("system", "messages")}
# The families a transcript is judged by; `conversation` types judge nothing else.
TRANSCRIPT_FAMILIES = ("conversation", "qualitative", "scenario")
# `history_path`: where a value is put, so plain keys only.
SETTABLE_PATH = re.compile(r"\$(\.[A-Za-z_][A-Za-z0-9_-]*)+")
SCENARIO_KEYS = ("id", "data", "data_file", "reference_response", "reference_response_file")
COMMON_ASSERTION_KEYS = ("type", "name", "on_failure", "critical")
LLM_ASSERTION_KEYS = ("threshold", "select")
EXTRACTION_KINDS = ("json_path", "header", "regex", "status", "xpath", "cookie", "url", "redirects")
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
ON_FAILURE = ("continue", "stop_request", "stop_flow")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
@dataclass(frozen=True)
class ChatSteps:
    """What the steps of a conversation flow build on (None for each when the conversation is invalid)."""

    request: Request | None
    conversation: Conversation | None


class SuiteBuilder:
    def __init__(self, item: Item, file: str, abs_path: Path, root: Path, collector: Collector,
                 environ: Mapping[str, str], strict_env: bool, run_vars: Mapping[str, Any] | None = None,
                 trust: Trust | None = None, fetch_file: Callable[[Path], None] | None = None) -> None:
        self.item = item
        self.file = file
        self.abs_path = abs_path
        self.root = root
        self.c = collector
        self.environ = environ
        self.strict_env = strict_env
        self.run_vars = run_vars or {}
        self.trust = trust or Trust.local()
        # See `load_suites`: brings a named file into a partial copy of the repository before it is resolved.
        self.fetch_file = fetch_file or (lambda path: None)
        self.specs = all_specs()
        # Suite.referenced_files (an ordered set): the suite's own file first, as found and where it leads.
        self.referenced: dict[str, None] = dict.fromkeys((file, self.display(abs_path)))
        self.schema_documents: dict[str, Any] = {}
        # Equal inline schemas (same keys in the same order) as one object: suites repeat a schema in many
        # steps, and each copy (~2 KB of dicts, lists and strings) is kept for the whole run.
        self.inline_schemas: dict[str, Any] = {}
        self.tool_definitions: dict[str, dict[str, Any]] = {}
        # The suite's `openapi:` description once loaded, and whether it names one (loaded or not).
        self.openapi = None
        self.openapi_named = False

    def fields(self, item: Item, where: str, allowed: tuple[str, ...]) -> Fields | None:
        """The mapping's Fields, or None (error recorded) when `item` is not a mapping."""
        if not isinstance(item.value, dict):
            self.c.error(item.span, f"{where} must be a mapping, not {describe(item.value)}")
            return None
        return Fields(item, where, allowed, self.c)

    def items(self, f: Fields, name: str, *, required: bool = False) -> list[Item]:
        """A list field's Items (a non-empty list when `required`)."""
        item = f.raw(name)
        if item is None:
            if required:
                f.error(f.item, f"{f.where} needs '{name}' (a list with at least one entry)")
            return []
        if not isinstance(item.value, list):
            f.error(item, f"'{name}' must be a list, not {describe(item.value)}")
            return []
        if required and not item.value:
            f.error(item, f"'{name}' must have at least one entry")
        return item.value

    # -- suite ---------------------------------------------------------------------------------

    def build(self) -> Suite:
        f = Fields(self.item, "the suite", SUITE_KEYS, self.c, extensions=True)
        version = f.raw("version")
        if version is None:
            f.error(self.item, "the suite needs 'version: 1'")
        elif version.value != 1 or isinstance(version.value, bool):
            f.error(version, f"unsupported version {describe(version.value)}: this Litmus reads version 1")
        name = f.take("suite", "string", required=True, default="", nonempty=True)
        self.openapi = self.openapi_spec(f)
        context, scenario_file = self.context(f)
        scenarios = None if context is None else [(s.id, s.data, s.reference_response) for s in context.scenarios]
        variables_item = f.raw("variables")
        variables = self.variables(f)
        scope = Scope(frozenset(variables), self.environ, self.strict_env, scenarios, run_vars=self.run_vars,
                      scenario_file=scenario_file, trust=self.trust)
        # A variable that refers to itself is reported where it is rendered: an extracted variable
        # of the same name would shadow the reference, and which names steps extract is not known yet.
        scope.sizes = variable_sizes(variables, scope)
        if variables_item is not None and variables:
            # Variables may hold templates, rendered where they are used; what a step extracts
            # is not known suite-wide, so here only suite-level names count.
            check_templates(variables_item, scope, self.c)
        base_url = f.take("base_url", "string", default=None)
        if base_url is not None:
            self.check_base_url(f, base_url, Scope(scope.variables, self.environ, self.strict_env, None,
                                                   run_vars=self.run_vars, sizes=scope.sizes, trust=self.trust))
        defaults_item = f.raw("defaults")
        defaults = None
        if defaults_item is not None:
            df = self.fields(defaults_item, "'defaults'", DEFAULTS_KEYS)
            defaults = self.request(df, defaults_item, None, is_defaults=True) if df else None
        judge_item = f.raw("judge")
        judge = None
        if judge_item is not None and (jf := self.fields(judge_item, "'judge'", ("threshold",))):
            judge = SuiteJudge(judge_item.pos, jf.field_pos, jf.take("threshold", "number", default=None,
                                                                       minimum=0, maximum=100))
        setup = self.steps(self.items(f, "setup"), scope, defaults, defaults_item)
        setup_names = frozenset(e.name for step in setup for e in step.extract) if f.has("setup") else None
        flow_scope = Scope(scope.variables, self.environ, self.strict_env, scope.scenarios, set(), self.run_vars,
                           setup_names, scope.scenario_file, scope.sizes, self.trust)
        flows = []
        seen: dict[str, Item] = {}
        for flow_item in self.items(f, "flows", required=True):
            flow = self.flow(flow_item, flow_scope, defaults, defaults_item, seen)
            if flow:
                flows.append(flow)
        # Teardown runs once, with no scenario: it sees suite-level names and the setup values.
        teardown_scope = Scope(scope.variables, self.environ, self.strict_env, None, set(), self.run_vars,
                               setup_names, None, scope.sizes, self.trust)
        teardown = self.steps(self.items(f, "teardown"), teardown_scope, defaults, defaults_item)
        return Suite(
            pos=self.item.pos, field_pos=f.field_pos, name=name, file=self.file, abs_path=self.abs_path,
            version=1, intent=f.take("intent", "string", default=None),
            pass_threshold=f.take("pass_threshold", "number", default=100, minimum=0, maximum=100),
            base_url=base_url, defaults=defaults, variables=variables, judge=judge, context=context,
            flows=tuple(flows), setup=tuple(setup), teardown=tuple(teardown),
            serial=f.take("serial", "boolean", default=False), rate_limit=self.rate_limit(f),
            referenced_files=tuple(self.referenced), schema_documents=self.schema_documents,
            tool_definitions=self.tool_definitions, openapi=self.openapi,
        )

    def openapi_spec(self, f: Fields):
        """The OpenAPI description `openapi:` names (relative to the suite file, like every file a suite names),
        loaded through the one resolver with the files its `$ref`s name; None, with an error at the field, when
        it cannot be (refused, not OpenAPI 3.0/3.1, a `$ref` to a URL or outside the repository)."""
        self.openapi_named = f.has("openapi")
        relative = f.take("openapi", "string", default=None, nonempty=True)
        if relative is None:
            return None
        item = f.raw("openapi")
        path = self.referenced_file(item, relative)
        if path is None:
            return None
        from litmus.openapi.document import SpecError, load_document  # lazy: only suites that name a spec

        try:
            document = load_document(self.display(path), self.root, fetch_file=self.fetch_file)
        except SpecError as exc:
            self.c.error(item.span, f"openapi: {exc}")
            return None
        for file in document.documents:
            self.referenced.setdefault(file)
        return document

    def check_base_url(self, f: Fields, base_url: str, scope: Scope) -> None:
        item = f.raw("base_url")
        if TEMPLATE.search(base_url):
            # Rendered when the run starts (`{{ env.PREVIEW_URL }}`), then checked like a literal one.
            check_templates(item, scope, self.c)
        elif not re.match(r"https?://[^/\s]+", base_url):
            f.error(item, f"'base_url' must be an absolute http:// or https:// URL, not {base_url!r}")

    def rate_limit(self, f: Fields) -> RateLimit | None:
        """`rate_limit: {per_second: N}` or `{per_minute: N}`, with an optional whole `burst` (default 1)."""
        item = f.raw("rate_limit")
        if item is None:
            return None
        rf = self.fields(item, "'rate_limit'", RATE_LIMIT_KEYS)
        if rf is None:
            return None
        self.no_templates(item, "'rate_limit' is read before the run starts: templates are not rendered in it")
        given = [name for name in ("per_second", "per_minute") if rf.has(name)]
        if len(given) != 1:
            where = item if not given else item.keys[given[1]]
            rf.error(where, "'rate_limit' needs 'per_second' or 'per_minute'" if not given else
                     "give 'per_second' or 'per_minute' in 'rate_limit', not both")
            return None
        rate = rf.take(given[0], "number", default=None)
        burst = rf.take("burst", "integer", default=1, minimum=1)
        if rate is not None and rate <= 0:
            rf.error(rf.raw(given[0]), f"'{given[0]}' must be more than 0, not {rate:g}")
            return None
        if rate is None or not rf.ok:
            return None
        return RateLimit(item.pos, rf.field_pos, per_second=rate if given[0] == "per_second" else rate / 60,
                         burst=burst)

    def steps(self, step_items: list[Item], scope: Scope, defaults: Request | None,
              defaults_item: Item | None, chat: ChatSteps | None = None) -> list[Step]:
        """A list of steps run in order (setup, teardown, a flow's), each seeing earlier extractions."""
        steps = []
        step_names: dict[str, Item] = {}
        for step_item in step_items:
            step = self.step(step_item, scope, defaults, defaults_item, step_names, chat)
            if step is not None:
                steps.append(step)
                scope = scope.with_extracted({e.name for e in step.extract})
        return steps

    def variables(self, f: Fields) -> dict[str, Any]:
        item = f.raw("variables")
        if item is None:
            return {}
        if not isinstance(item.value, dict):
            f.error(item, f"'variables' must be a mapping of names to values, not {describe(item.value)}")
            return {}
        for key, key_item in item.keys.items():
            if not IDENTIFIER.fullmatch(key):
                f.error(key_item, f"variable name '{key}' must be letters, digits and _ (not starting with a digit)")
        return item.plain()

    def no_templates(self, item: Item, message: str) -> None:
        if isinstance(item.value, (dict, list)):
            for child in item.value.values() if isinstance(item.value, dict) else item.value:
                self.no_templates(child, message)
        elif isinstance(item.value, str) and TEMPLATE.search(item.value):
            self.c.error(item.span, message)

    # -- context and scenarios -----------------------------------------------------------------

    def context(self, f: Fields) -> tuple[Context | None, FileScenarios | None]:
        item = f.raw("context")
        if item is None:
            return None, None
        cf = self.fields(item, "'context'", ("name", "scenarios", "scenarios_file"))
        if cf is None:
            return None, None
        return self.scenario_set(cf, item, cf.take("name", "string", default=None))

    def scenario_set(self, cf: Fields, item: Item, name: str | None) -> tuple[Context, FileScenarios | None]:
        """The `scenarios` and `scenarios_file` of `cf` (the suite's `context`, or a flow that has its own)."""
        scenarios = []
        seen: dict[str, Item] = {}
        for scenario_item in self.items(cf, "scenarios", required=not cf.has("scenarios_file")):
            scenario = self.scenario(scenario_item, seen)
            if scenario:
                scenarios.append(scenario)
        relative = cf.take("scenarios_file", "string", default=None, nonempty=True)
        path = self.referenced_file(cf.raw("scenarios_file"), relative) if relative else None
        if path is None:
            return Context(item.pos, cf.field_pos, name, tuple(scenarios)), None
        count, shape = self.scenario_rows(cf.raw("scenarios_file"), path, {s.id for s in scenarios})
        context = Context(item.pos, cf.field_pos, name, tuple(scenarios), path, self.display(path), count)
        return context, shape

    def scenario_rows(self, item: Item, path: Path, inline_ids: set[str]) -> tuple[int, FileScenarios | None]:
        """Check every row of a scenarios file (streamed): (rows, what templates may use of them)."""
        display = self.display(path)
        first_line: dict[str, int] = {}
        common: set[str] | None = None
        missing_reference = None
        try:
            for row in rows(path, display):
                if row.id in inline_ids:
                    raise RowError(row.line, 1, f"scenario id '{row.id}' is also an inline scenario's")
                if row.id in first_line:
                    raise RowError(row.line, 1, f"duplicate scenario id '{row.id}' (first at line "
                                                f"{first_line[row.id]})")
                first_line[row.id] = row.line
                common = set(row.data) if common is None else common & row.data.keys()
                if row.reference_response is None and missing_reference is None:
                    missing_reference = row.id
        except RowError as exc:
            self.c.error(Span(Position(display, exc.line, exc.column)), f"{display}: {exc}")
            self.c.error(item.span, f"'{display}' has an error at line {exc.line}, column {exc.column}")
            return 0, None
        except files.FileRefused as exc:
            self.c.error(item.span, str(exc))
            return 0, None
        if not first_line:
            self.c.error(item.span, f"'{display}' has no rows: a scenarios file needs at least one")
        return len(first_line), FileScenarios(display, frozenset(common or ()), missing_reference)

    def scenario(self, item: Item, seen: dict[str, Item]) -> Scenario | None:
        f = self.fields(item, "a scenario", SCENARIO_KEYS)
        if f is None:
            return None
        scenario_id = f.take("id", "string", required=True, default="", nonempty=True)
        self.unique(f, "id", scenario_id, seen, "scenario id")
        self.at_most_one(f, ("data", "data_file"))
        self.at_most_one(f, ("reference_response", "reference_response_file"))
        data = f.raw("data").plain() if f.has("data") else None
        if f.has("data"):
            self.no_templates(f.raw("data"), "scenario data is plain data: templates are not rendered in it")
        data_file = f.take("data_file", "string", default=None)
        if data_file is not None:
            data = self.data_file(f, data_file)
        reference = f.take("reference_response", "string", default=None)
        reference_file = f.take("reference_response_file", "string", default=None)
        if reference_file is not None:
            path = self.referenced_file(f.raw("reference_response_file"), reference_file)
            text = self.read_text(f, "reference_response_file", path) if path else None
            # A text file's final newline is the file's, not the reference's.
            reference = text.removesuffix("\n") if text is not None else None
        return Scenario(item.pos, f.field_pos, scenario_id, data, reference, data_file, reference_file)

    def data_file(self, f: Fields, relative: str) -> Any:
        path = self.referenced_file(f.raw("data_file"), relative)
        if path is None:
            return None
        data = self.read_data(f.raw("data_file"), path)
        return None if data is MISSING else data

    def referenced_file(self, item: Item, relative: str) -> Path | None:
        """The real path of the file `relative` names, by the one rule (`litmus.files`), recorded in
        `referenced_files`; a file it refuses is an error at `item`, the field that named it."""
        try:
            if not os.path.isabs(relative):
                self.fetch_file(Path(os.path.normpath(self.abs_path.parent / relative)))
            path = files.resolve(relative, self.abs_path.parent, self.root)
        except files.FileRefused as exc:
            self.c.error(item.span, str(exc))
            return None
        self.record_file(self.abs_path.parent / relative, path)
        return path

    def record_file(self, written: Path, real: Path) -> None:
        """A file the suite reads: the path as written (a PR changing that name changes the suite) and, when a
        symlink leads elsewhere, its real path (a PR changing the target's content does too)."""
        for path in (Path(os.path.normpath(written)), real):
            self.referenced.setdefault(self.display(path))

    def read_data(self, item: Item, path: Path) -> Any:
        """A referenced JSON (by .json suffix) or YAML file's data, MISSING when it cannot be read: then an
        error at `item`, the field that named it, and errors inside that file point into it."""
        display = self.display(path)
        try:
            data = files.read_bytes(path, MAX_FILE_BYTES, shown=display, what="referenced files")
            if path.suffix.lower() == ".json":
                value = json.loads(data.decode())
                if too_deep(value):
                    self.c.error(item.span, f"'{display}' nests deeper than {MAX_DEPTH} levels (the limit for YAML "
                                            "too)")
                    return MISSING
                return value
            # The one YAML reader, as for probe files: `2026-12-03` stays the text it reads as.
            parsed = parse_yaml(data, display, self.c)
            return None if parsed is None else parsed.plain()
        except UnicodeDecodeError:
            self.c.error(item.span, f"'{display}' is not UTF-8 text")
        except json.JSONDecodeError as exc:
            self.c.error(item.span, f"{display}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}")
        except RecursionError:
            self.c.error(item.span, f"'{display}' nests too deeply to read")
        except SourceError as exc:
            self.c.error(exc.span, exc.message)
            self.c.error(item.span, f"cannot load '{display}'")
        except files.FileRefused as exc:
            self.c.error(item.span, str(exc))
        return MISSING

    def read_text(self, f: Fields, name: str, path: Path) -> str | None:
        """The UTF-8 text of `path` (resolved), capped like a probe file; an error at field `name` if not."""
        try:
            return files.read_bytes(path, MAX_FILE_BYTES, shown=self.display(path), what="referenced files").decode()
        except UnicodeDecodeError:
            f.error(f.raw(name), f"'{self.display(path)}' is not UTF-8 text")
        except files.FileRefused as exc:
            f.error(f.raw(name), str(exc))
        return None

    def display(self, path: Path) -> str:
        try:
            return Path(path).relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return Path(path).as_posix()

    # -- flows and steps -----------------------------------------------------------------------

    def flow(self, item: Item, scope: Scope, defaults: Request | None, defaults_item: Item | None,
             seen: dict[str, Item]) -> Flow | None:
        f = self.fields(item, "a flow", FLOW_KEYS)
        if f is None:
            return None
        name = f.take("name", "string", required=True, default="", nonempty=True)
        self.unique(f, "name", name, seen, "flow name")
        runs = f.take("runs", "integer", default=1, minimum=1, maximum=MAX_RUNS)
        context = None
        if f.has("scenarios") or f.has("scenarios_file"):
            # The flow's own scenarios replace the suite's for it: its templates see only these.
            context, scenario_file = self.scenario_set(f, item, None)
            scope = replace(scope, scenarios=[(s.id, s.data, s.reference_response) for s in context.scenarios],
                            scenario_file=scenario_file)
        conversation, chat = None, None
        if (conversation_item := f.raw("conversation")) is not None:
            conversation, chat = self.conversation(conversation_item, scope, defaults), ChatSteps(None, None)
            if conversation is not None:
                chat = ChatSteps(*conversation)
        steps = self.steps(self.items(f, "steps", required=True), scope, defaults, defaults_item, chat)
        judged_on_transcript: list[Assertion] = []
        if (assertions_item := f.raw("conversation_assertions")) is not None and conversation_item is None:
            f.error(f.item.keys["conversation_assertions"], "'conversation_assertions' judge a conversation's "
                                                            "transcript: the flow needs 'conversation'")
        elif assertions_item is not None:
            # Judged after the last step: every extraction of the flow is known by then.
            last = scope.with_extracted({e.name for step in steps for e in step.extract})
            judged_on_transcript = [a for a in (self.assertion(i, last, on_transcript=True)
                                                for i in self.items(f, "conversation_assertions")) if a]
        return Flow(item.pos, f.field_pos, name, runs, tuple(steps),
                    conversation[1] if conversation else None, tuple(judged_on_transcript), self.skip(f), context)

    def conversation(self, item: Item, scope: Scope, defaults: Request | None) -> tuple[Request, Conversation] | None:
        """The conversation's request (suite defaults merged in) and how it talks to the API."""
        cf = self.fields(item, "'conversation'", CONVERSATION_KEYS)
        if cf is None:
            return None
        system = cf.take("system", "string", default=None)
        if system is not None:
            check_templates(cf.raw("system"), scope, self.c)
        conversation_format = self.conversation_format(cf)
        request_item = cf.raw("request")
        if request_item is None:
            cf.error(item, "'conversation' needs 'request' (at least its 'url')")
            return None
        rf = self.fields(request_item, "the conversation's 'request'", REQUEST_KEYS)
        if rf is None or conversation_format is None:
            return None
        request = self.request(rf, request_item, defaults)
        # Where the history goes is the conversation's, so its templates see the suite's names only.
        check_templates(request_item, scope, self.c)
        other_body = next((key for key in BODY_KEYS if key != "json" and rf.has(key)), None)
        if other_body is not None:
            rf.error(request_item.keys[other_body], f"a conversation sends the history as JSON: use 'json', "
                                                    f"not '{other_body}'")
        if request.json is not MISSING and not isinstance(request.json, dict):
            rf.error(rf.raw("json"), f"a conversation's 'json' must be a mapping (the history is added to it), "
                                     f"not {describe(request.json)}")
        elif conversation_format.api == "mapping":
            self.history_place(rf.raw("json"), conversation_format.history_path)
        elif isinstance(request.json, dict):
            for key in HISTORY_KEYS[conversation_format.api]:
                if key in request.json:
                    rf.error(request_item.value["json"].keys[key],
                             f"'{key}' is where Litmus puts the conversation: leave it out of 'json'")
        stream = request.stream
        if conversation_format.api == "mapping" and conversation_format.reply_path is None and stream is None:
            cf.error(cf.raw("format"), "the mapping form needs 'reply_path' (where the reply is read), unless the "
                                       "request is streamed (the reply is then the assembled text)")
        if stream is not None and conversation_format.api != "mapping" and stream.format != conversation_format.api:
            rf.error(rf.raw("stream"), f"{with_article(conversation_format.api)} conversation is streamed as "
                                       f"'{conversation_format.api}', not '{stream.format}'")
        return request, Conversation(item.pos, cf.field_pos, format=conversation_format, system=system)

    def history_place(self, json_item: Item | None, history_path: str) -> None:
        """`history_path` must lead to a key the request's json leaves free, through mappings only (the run
        would otherwise replace what the probe wrote)."""
        node = json_item
        *parents, last = history_path[2:].split(".")
        for key in parents:
            if node is None or key not in node.value:
                return
            node = node.value[key]
            if not isinstance(node.value, dict):
                self.c.error(node.span, f"history_path {history_path} goes through '{key}', which holds "
                                        f"{describe(node.value)}, not a mapping")
                return
        if node is not None and last in node.value:
            self.c.error(node.keys[last].span, f"'{last}' is where Litmus puts the conversation (history_path "
                                               f"{history_path}): leave it out of 'json'")

    def conversation_format(self, cf: Fields) -> ConversationFormat | None:
        """`format: openai | anthropic | {history_path, reply_path, history: none}` (default openai)."""
        item = cf.raw("format")
        if item is None:
            return ConversationFormat(cf.item.pos, {}, "openai")
        if isinstance(item.value, str):
            api = cf.check(item, "format", "string", choices=CONVERSATION_APIS, default=None)
            return ConversationFormat(item.pos, {}, api) if api else None
        ff = self.fields(item, "'format'", MAPPING_FORMAT_KEYS)
        if ff is None:
            return None
        history_path = ff.take("history_path", "string", required=True, default=None, nonempty=True)
        if history_path is not None and not SETTABLE_PATH.fullmatch(history_path):
            ff.error(ff.raw("history_path"), f"'history_path' is where the history is put: a path of plain keys "
                                             f"like $.messages, not {history_path!r}")
            history_path = None
        reply_path = ff.take("reply_path", "string", default=None, nonempty=True)
        if reply_path is not None and (problem := checks.jsonpath_error(reply_path)):
            ff.error(ff.raw("reply_path"), problem)
        history = ff.take("history", "string", default=None, choices=("none",))
        if history_path is None:
            return None
        return ConversationFormat(item.pos, ff.field_pos, "mapping", history_path, reply_path, history != "none")

    def step(self, item: Item, scope: Scope, defaults: Request | None, defaults_item: Item | None,
             seen: dict[str, Item], chat: ChatSteps | None = None) -> Step | None:
        f = self.fields(item, "a step", CONVERSATION_STEP_KEYS)
        if f is None:
            return None
        name = f.take("name", "string", required=True, default="", nonempty=True)
        self.unique(f, "name", name, seen, "step name")
        request_item = f.raw("request")
        request = None
        user, simulate, tool_results = None, None, None
        if chat is not None:
            user, simulate, tool_results = self.chat_turn(f, scope, chat)
            request = chat.request
            if request_item is not None and chat.request is not None and \
                    (rf := self.fields(request_item, "a conversation step's 'request'", CONVERSATION_OVERRIDE_KEYS)):
                request = self.request_override(rf, request_item, chat.request)
                check_templates(request_item, scope, self.c)
        else:
            for key in ("user", "simulate", "tool_results"):
                if f.has(key):
                    f.error(item.keys[key], f"'{key}' is for the steps of a conversation flow (give the flow "
                                            f"'conversation')")
            if request_item is None:
                f.error(item, "a step needs 'request' (at least its 'url')")
            elif rf := self.fields(request_item, "'request'", REQUEST_KEYS):
                request = self.request(rf, request_item, defaults)
        if request_item is not None or chat is not None:
            # Defaults are checked in each step's scope: they may use what earlier steps extracted.
            for part in (request_item, defaults_item):
                if part is not None and isinstance(part.value, dict):
                    check_templates(part, scope, self.c)
        extract = self.extractions(f)
        retry = self.retry(f)
        own = scope.with_extracted({e.name for e in extract})
        assertions = [a for a in (self.assertion(i, own) for i in self.items(f, "assertions")) if a]
        skip = self.skip(f)
        if skip is not None and chat is not None:
            f.error(item.keys["skip"], "a conversation's turns build on each other: skip the whole flow, not one step")
        return Step(item.pos, f.field_pos, name, request, tuple(extract), retry, tuple(assertions), user, simulate,
                    tool_results, skip)

    def skip(self, f: Fields) -> str | None:
        """`skip: true` or `skip: "reason"`: why the flow or step is reported `skipped` (None: it runs)."""
        item = f.raw("skip")
        if item is None or item.value is False:
            return None
        if item.value is True:
            return "skip: true in the probe"
        if isinstance(item.value, str) and item.value.strip():
            return f"skip: {item.value.strip()}"
        f.error(item, f"'skip' must be true, false or a reason (non-empty text), not {describe(item.value)}")
        return None

    def chat_turn(self, f: Fields, scope: Scope,
                  chat: ChatSteps) -> tuple[str | None, Simulate | None, dict[str, Any] | None]:
        """A conversation step's `user` or `simulate`, and its `tool_results`."""
        if f.has("user") == f.has("simulate"):
            where = f.item.keys["simulate"] if f.has("user") else f.item
            f.error(where, "a conversation step needs exactly one of 'user' (what the user says) or 'simulate'")
        user = f.take("user", "string", default=None, nonempty=True)
        if user is not None:
            check_templates(f.raw("user"), scope, self.c)
        simulate = None
        if (simulate_item := f.raw("simulate")) is not None and (sf := self.fields(simulate_item, "'simulate'",
                                                                                  SIMULATE_KEYS)):
            simulate = Simulate(simulate_item.pos, sf.field_pos,
                                sf.take("persona", "string", required=True, default="", nonempty=True),
                                sf.take("goal", "string", required=True, default="", nonempty=True),
                                sf.take("max_turns", "integer", required=True, default=1, minimum=1,
                                        maximum=MAX_SIMULATED_TURNS))
            check_templates(simulate_item, scope, self.c)
        tool_results = None
        if (results_item := f.raw("tool_results")) is not None:
            if chat.conversation is not None and chat.conversation.format.api == "mapping":
                f.error(results_item, "'tool_results' answer an openai or anthropic API's tool calls; the mapping "
                                      "form carries no tool calls")
            tool_results = f.check(results_item, "tool_results", "mapping", default=None)
            if tool_results is not None:
                check_templates(results_item, scope, self.c)
        return user, simulate, tool_results

    def request_override(self, f: Fields, item: Item, base: Request) -> Request:
        """A conversation step's `request`: the conversation's with these fields merged in (headers, query
        and json mappings key by key, the step winning)."""
        merged = self.request(f, item, base, is_defaults=True)
        json_value = base.json
        if f.has("json"):
            given = f.raw("json").plain()
            if not isinstance(given, dict):
                f.error(f.raw("json"), f"a conversation step's 'json' must be a mapping (merged into the "
                                       f"conversation's), not {describe(given)}")
            else:
                json_value = {**(base.json if isinstance(base.json, dict) else {}), **given}
        return replace(base, json=json_value, headers=merged.headers, cookies=merged.cookies, query=merged.query,
                       auth=merged.auth, delay_ms=merged.delay_ms, timeout_ms=merged.timeout_ms,
                       follow_redirects=merged.follow_redirects, retry_on_429=merged.retry_on_429,
                       field_pos={**base.field_pos, **f.field_pos})

    def request(self, f: Fields, item: Item, base: Request | None, *, is_defaults: bool = False) -> Request:
        """The request with `base` (the suite defaults) merged in: headers and query key by key, step winning."""
        values: dict[str, Any] = {}
        field_pos = {}
        if base is not None:
            values = {"headers": dict(base.headers), "cookies": dict(base.cookies), "query": dict(base.query),
                      "timeout_ms": base.timeout_ms, "follow_redirects": base.follow_redirects, "auth": base.auth,
                      "tls": base.tls, "delay_ms": base.delay_ms, "retry_on_429": base.retry_on_429}
            field_pos = dict(base.field_pos)
        if not is_defaults:
            method = f.take("method", "string", default="POST" if f.has("graphql") else "GET")
            if method.upper() not in METHODS:
                f.error(f.raw("method"), f"unknown HTTP method {method!r}{did_you_mean(method.upper(), METHODS)}")
            elif f.has("graphql") and method.upper() != "POST":
                f.error(f.raw("method"), "a graphql request is sent with POST; leave 'method' out")
            values["method"] = method.upper()
            values["url"] = f.take("url", "string", required=True, default="", nonempty=True)
            values["stream"] = self.stream(f)
            values["usage"] = self.usage_paths(f)
            if (pricing_model := f.raw("pricing_model")) is not None:
                self.no_templates(pricing_model, "'pricing_model' names a 'pricing:' entry of litmus.yaml: templates "
                                                 "are not rendered in it")
            values["pricing_model"] = f.take("pricing_model", "string", default=None, nonempty=True)
        for name in ("headers", "cookies", "query"):
            given = self.string_map(f, name, allow_lists=name == "query")
            values[name] = {**values.get(name, {}), **given}
        self.check_cookies(f, values)
        self.at_most_one(f, BODY_KEYS)
        if f.has("json"):
            values["json"] = f.raw("json").plain()
        values["body"] = f.take("body", "string", default=None)
        if f.has("form"):
            values["form"] = self.string_map(f, "form", allow_lists=True)
        if f.has("multipart"):
            values["multipart"] = self.multipart(f)
        if (body_file := f.take("body_file", "string", default=None, nonempty=True)) is not None:
            values["body_file"] = self.request_file(f.raw("body_file"), body_file)
            values["body_file_shown"] = self.display(values["body_file"]) if values["body_file"] else ""
        if f.has("graphql"):
            values["graphql"] = self.graphql(f)
        if f.has("auth"):
            values["auth"] = self.auth(f)
            own = [k for k in values["headers"] if k.lower() == "authorization"]
            headers_item = f.raw("headers")
            if headers_item is not None and isinstance(headers_item.value, dict) and \
                    any(k.lower() == "authorization" for k in headers_item.value):
                f.error(f.item.keys["auth"], "give 'auth' or an Authorization header, not both")
            for key in own:  # the suite defaults' header gives way to the step's own auth
                values["headers"].pop(key)
        elif values.get("auth") is not None:
            values["headers"] = {k: v for k, v in values["headers"].items() if k.lower() != "authorization"}
        if f.has("tls"):
            values["tls"] = self.tls(f)
        delay = f.take("delay_ms", "number", default=MISSING, minimum=0)
        if delay is not MISSING:
            values["delay_ms"] = delay
        timeout = f.take("timeout_ms", "number", default=MISSING, minimum=1)
        if timeout is not MISSING:
            values["timeout_ms"] = timeout
        follow = f.take("follow_redirects", "boolean", default=MISSING)
        if follow is not MISSING:
            values["follow_redirects"] = follow
        resend = f.take("retry_on_429", "boolean", default=MISSING)
        if resend is not MISSING:
            values["retry_on_429"] = resend
        field_pos.update(f.field_pos)
        return Request(item.pos, field_pos, **values)

    def check_cookies(self, f: Fields, values: dict[str, Any]) -> None:
        """`cookies` names are cookie names (RFC 6265 tokens), their literal values hold no `;` (which would
        start another cookie), and they do not come with a Cookie header of the same request."""
        item = f.raw("cookies")
        if item is None:
            if f.has("headers") and any(k.lower() == "cookie" for k in f.raw("headers").plain() or ()):
                values["cookies"] = {}  # the step's own Cookie header replaces the suite defaults' cookies
            return
        if not isinstance(item.value, dict):
            return
        for name, value in item.value.items():
            if not COOKIE_NAME.fullmatch(name):
                f.error(item.keys[name], f"cookie name {name!r} must be a token: letters, digits and "
                                         "!#$%&'*+-.^_`|~ (RFC 6265)")
            elif isinstance(value.value, str) and not TEMPLATE.search(value.value) and \
                    (bad := COOKIE_VALUE_REFUSED.search(value.value)):
                f.error(value, f"cookie '{name}' cannot hold {bad.group()!r}: it would end the cookie")
        if any(k.lower() == "cookie" for k in values["headers"]):
            f.error(f.item.keys["cookies"], "give 'cookies' or a Cookie header, not both")

    def stream(self, f: Fields) -> Stream | None:
        """`stream: openai` (a format name) or `stream: {format, text_path, done}`."""
        item = f.raw("stream")
        if item is None:
            return None
        self.no_templates(item, "'stream' is read when the response arrives: templates are not rendered in it")
        if isinstance(item.value, str):
            return Stream(item.pos, {}, f.check(item, "stream", "string", choices=STREAM_FORMATS, default="sse"))
        sf = self.fields(item, "'stream'", STREAM_KEYS)
        if sf is None:
            return None
        text_path = sf.take("text_path", "string", default=None, nonempty=True)
        if text_path and (problem := checks.jsonpath_error(text_path)):
            sf.error(sf.raw("text_path"), problem)
        done = sf.take("done", "string", default=None, nonempty=True)
        if done and done.startswith("$") and (problem := checks.jsonpath_error(done)):
            sf.error(sf.raw("done"), problem)
        return Stream(item.pos, sf.field_pos, sf.take("format", "string", default="sse", choices=STREAM_FORMATS),
                      text_path, done)

    def usage_paths(self, f: Fields) -> UsagePaths | None:
        """`usage: {input_path, output_path}`: JSONPaths giving the tokens the response used."""
        item = f.raw("usage")
        if item is None:
            return None
        self.no_templates(item, "'usage' is read when the response arrives: templates are not rendered in it")
        uf = self.fields(item, "'usage'", USAGE_KEYS)
        if uf is None:
            return None
        paths = {}
        for key in USAGE_KEYS:
            path = paths[key] = uf.take(key, "string", default=None, nonempty=True)
            if path and (problem := checks.jsonpath_error(path)):
                uf.error(uf.raw(key), problem)
        if not any(paths.values()):
            uf.error(item, "'usage' needs input_path and/or output_path (JSONPaths into the response)")
        return UsagePaths(item.pos, uf.field_pos, **paths)

    def request_file(self, item: Item, relative: str) -> Path | None:
        """A file a request sends (body_file, multipart), resolved at load; opened again by the same
        rule when it is sent (it may have been swapped since)."""
        if TEMPLATE.search(relative):
            self.c.error(item.span, "a file path takes no templates: it is checked when the suite loads")
            return None
        path = self.referenced_file(item, relative)
        if path is not None:
            try:
                files.open_file(path, files.MAX_REQUEST_FILE_BYTES, shown=relative, what="request files").close()
            except files.FileRefused as exc:
                self.c.error(item.span, str(exc))
                return None
        return path

    def auth(self, f: Fields) -> Auth | None:
        item = f.raw("auth")
        af = self.fields(item, "'auth'", AUTH_KINDS)
        if af is None:
            return None
        given = [k for k in AUTH_KINDS if af.has(k)]
        if len(given) != 1:
            if af.ok:
                af.error(item, f"'auth' needs exactly one of {', '.join(AUTH_KINDS)} "
                               f"(got {' and '.join(given) or 'none'})")
            return None
        kind = given[0]
        if kind == "bearer":
            token = af.take("bearer", "string", default="", nonempty=True)
            return Auth(item.pos, af.field_pos, "bearer", token=token)
        bf = self.fields(af.raw(kind), f"'auth.{kind}'", ("username", "password"))
        if bf is None:
            return None
        username = bf.take("username", "string", required=True, default="")
        if kind == "basic" and ":" in username and not TEMPLATE.search(username):
            bf.error(bf.raw("username"), "a basic-auth username cannot contain ':' (RFC 7617)")
        password = bf.take("password", "string", required=True, default="")
        return Auth(item.pos, {**af.field_pos, **bf.field_pos}, kind, username=username, password=password)

    def tls(self, f: Fields) -> Tls | None:
        """`tls: {verify, ca_file, client_cert, client_key}`: the files resolved now; a file holding a private key
        must be untracked (written from a secret by the workflow) and is refused in an untrusted run."""
        item = f.raw("tls")
        self.no_templates(item, "'tls' is read when the suite loads: templates are not rendered in it")
        tf = self.fields(item, "'tls'", TLS_KEYS)
        if tf is None:
            return None
        verify = tf.take("verify", "boolean", default=True)
        paths: dict[str, Path | None] = {}
        for name in ("ca_file", "client_cert", "client_key"):
            relative = tf.take(name, "string", default=None, nonempty=True)
            paths[name] = self.tls_file(tf.raw(name), name, relative) if relative is not None else None
        if not verify and tf.has("ca_file"):
            tf.error(tf.raw("ca_file"), "'ca_file' has no use with 'verify: false' (nothing is verified)")
        if tf.has("client_key") and not tf.has("client_cert"):
            tf.error(tf.raw("client_key"), "'client_key' needs 'client_cert' (the certificate it belongs to)")
        shown = {name: self.display(path) for name, path in paths.items() if path is not None}
        return Tls(item.pos, tf.field_pos, verify, **paths, shown=shown)

    def tls_file(self, item: Item, name: str, relative: str) -> Path | None:
        """A `tls` file, resolved (inside the repository, a regular file); a private key in it (`client_key`, or
        a `client_cert` PEM holding its key) is refused when git tracks the file or the run is untrusted."""
        path = self.referenced_file(item, relative)
        if path is None:
            return None
        try:
            content = files.read_bytes(path, MAX_FILE_BYTES, shown=relative, what="TLS files")
        except files.FileRefused as exc:
            self.c.error(item.span, str(exc))
            return None
        if name == "client_key" or PRIVATE_KEY_MARK in content:
            what = f"'{relative}' holds a private key"
            if git.is_tracked(path, self.root):
                self.c.error(item.span, f"{what} and git tracks it: anyone who can read the repository has it. "
                                        "Write it from a secret into an untracked file in a workflow step "
                                        "(see docs/probe-format.md, TLS), and remove it from git and its history")
                return None
            if any(mark in content for mark in ENCRYPTED_KEY_MARKS):
                self.c.error(item.span, f"{what} that is encrypted: nothing can give its passphrase; write the "
                                        "key unencrypted from the secret (openssl pkey -in KEY -out FILE)")
                return None
            if not self.trust.runs_pr_code:
                self.c.error(item.span, f"{what}: a client key is a credential, which an untrusted run "
                                        f"({self.trust.reason}) does not use, like a secret outside env-allow")
                return None
        return path

    def multipart(self, f: Fields) -> tuple[MultipartPart, ...]:
        item = f.raw("multipart")
        if not isinstance(item.value, dict) or not item.value:
            f.error(item, f"'multipart' must be a mapping of field names to parts, not {describe(item.value)}")
            return ()
        parts = []
        for name, part in item.value.items():
            if isinstance(part.value, (str, int, float)) and not isinstance(part.value, bool):
                parts.append(MultipartPart(part.pos, {}, name, value=str(part.value)))
                continue
            if not isinstance(part.value, dict):
                f.error(part, f"multipart part '{name}' must be text or a mapping with 'file' or 'value', "
                              f"not {describe(part.value)}")
                continue
            is_file = "file" in part.value
            pf = Fields(part, f"multipart part '{name}'", MULTIPART_FILE_KEYS if is_file else MULTIPART_VALUE_KEYS,
                        self.c)
            content_type = pf.take("content_type", "string", default=None, nonempty=True)
            if is_file:
                relative = pf.take("file", "string", default="", nonempty=True)
                path = self.request_file(pf.raw("file"), relative) if relative else None
                filename = pf.take("filename", "string", default=None, nonempty=True)
                parts.append(MultipartPart(part.pos, pf.field_pos, name, file=path,
                                           file_shown=self.display(path) if path else "",
                                           filename=filename, content_type=content_type))
            else:
                value = pf.take("value", "string", required=True, default="")
                parts.append(MultipartPart(part.pos, pf.field_pos, name, value=value, content_type=content_type))
        return tuple(parts)

    def graphql(self, f: Fields) -> GraphQL | None:
        item = f.raw("graphql")
        gf = self.fields(item, "'graphql'", ("query", "variables", "operation_name"))
        if gf is None:
            return None
        query = gf.take("query", "string", required=True, default="", nonempty=True)
        variables = gf.take("variables", "mapping", default=None)
        # `operation_name: null` (the contract's own example) is the same as leaving it out.
        given = gf.raw("operation_name")
        operation = None if given is None or given.value is None else gf.take("operation_name", "string", nonempty=True)
        return GraphQL(item.pos, gf.field_pos, query, variables, operation)

    def string_map(self, f: Fields, name: str, *, allow_lists: bool) -> dict[str, Any]:
        """headers / query / form: text (or number) values; query and form may repeat a key with a list."""
        item = f.raw(name)
        if item is None:
            return {}
        if not isinstance(item.value, dict):
            f.error(item, f"'{name}' must be a mapping, not {describe(item.value)}")
            return {}
        result = {}
        for key, value in item.value.items():
            values = value.value if allow_lists and isinstance(value.value, list) else [value]
            bad = [v for v in values if not isinstance(v.value, (str, int, float)) or isinstance(v.value, bool)]
            if bad:
                kind = "text or a number" + (" (or a list of them)" if allow_lists else "")
                f.error(bad[0], f"'{name}' value for '{key}' must be {kind}; quote it, got {describe(bad[0].value)}")
                continue
            plain = value.plain()
            result[key] = plain if name != "headers" or isinstance(plain, str) else str(plain)
        return result

    def extractions(self, f: Fields) -> list[Extraction]:
        item = f.raw("extract")
        if item is None:
            return []
        if not isinstance(item.value, dict):
            f.error(item, f"'extract' must be a mapping of variable names to extractions, not {describe(item.value)}")
            return []
        result = []
        for name, value in item.value.items():
            if not IDENTIFIER.fullmatch(name):
                f.error(item.keys[name], f"variable name '{name}' must be letters, digits and _")
            ef = self.fields(value, f"extraction '{name}'", (*EXTRACTION_KINDS, "group"))
            if ef is None:
                continue
            given = [k for k in EXTRACTION_KINDS if ef.has(k)]
            if len(given) != 1 and ef.ok:  # with an unknown key, its "did you mean" says it better
                listed = ", ".join(EXTRACTION_KINDS)
                what = "none" if not given else " and ".join(given)
                ef.error(value, f"extraction '{name}' needs exactly one of {listed} (got {what})")
            if len(given) != 1:
                continue
            kind = given[0]
            expr, group = "", 0
            if kind in ("status", "url", "redirects"):
                # `choices=(True,)` crashed the message it builds (it joins strings): checked here instead.
                if ef.take(kind, "boolean", default=True) is not True:
                    ef.error(ef.raw(kind), f"'{kind}' must be true (what it extracts needs no other value)")
            else:
                expr = ef.take(kind, "string", default="", nonempty=True)
            if kind == "json_path" and expr and (problem := checks.jsonpath_error(expr)):
                ef.error(ef.raw(kind), problem)
            if kind == "xpath" and expr and (problem := checks.xpath_error(expr, None)):
                ef.error(ef.raw(kind), problem)
            if kind == "regex" and expr:
                group = self.regex_group(ef, expr)
            elif ef.has("group"):
                ef.error(ef.raw("group"), "'group' is only for regex extractions")
            result.append(Extraction(value.pos, ef.field_pos, name, kind, expr, group))
        return result

    def regex_group(self, f: Fields, expr: str) -> int | str:
        problem = checks.regex_error(expr)
        if problem:
            f.error(f.raw("regex"), problem)
            return 0
        group_item = f.raw("group")
        if group_item is None:
            return 0
        group = group_item.value
        compiled = checks.compile_regex(expr)
        if isinstance(group, int) and not isinstance(group, bool):
            if not 0 <= group <= compiled.groups:
                f.error(group_item, f"the regex has {compiled.groups} group(s); group {group} does not exist")
            return group
        if isinstance(group, str):
            if group not in compiled.groupindex:
                f.error(group_item, f"the regex has no group named '{group}'")
            return group
        f.error(group_item, f"'group' must be a group number or name, not {describe(group)}")
        return 0

    def retry(self, f: Fields) -> Retry | None:
        item = f.raw("retry")
        if item is None:
            return None
        rf = self.fields(item, "'retry'", ("attempts", "interval_ms"))
        if rf is None:
            return None
        return Retry(item.pos, rf.field_pos, rf.take("attempts", "integer", default=1, minimum=1),
                     rf.take("interval_ms", "number", default=1000, minimum=0))

    # -- assertions ----------------------------------------------------------------------------

    def assertion(self, item: Item, scope: Scope, *, on_transcript: bool = False) -> Assertion | None:
        if not isinstance(item.value, dict):
            self.c.error(item.span, f"an assertion must be a mapping with 'type', not {describe(item.value)}")
            return None
        type_item = item.value.get("type")
        if type_item is None:
            self.c.error(item.span, "an assertion needs 'type'")
            return None
        spec = self.specs.get(type_item.value) if isinstance(type_item.value, str) else None
        if spec is None:
            shown = type_item.value if isinstance(type_item.value, str) else describe(type_item.value)
            self.c.error(type_item.span, f"unknown assertion type '{shown}'{did_you_mean(str(shown), self.specs)}")
            return None
        if on_transcript and spec.family not in TRANSCRIPT_FAMILIES:
            self.c.error(type_item.span, f"{spec.type} checks one response; 'conversation_assertions' take judged "
                                         f"types (conversation, qualitative and scenario-aware), judged on the "
                                         f"transcript: put it in a step's 'assertions'")
            return None
        if not on_transcript and spec.family == "conversation":
            self.c.error(type_item.span, f"{spec.type} judges a whole conversation: put it under the flow's "
                                         f"'conversation_assertions'")
            return None
        own = tuple(spec.fields)
        hints = predicates.OTHER_SPELLINGS if "not" in spec.fields else None
        f = Fields(item, with_article(f"{spec.type} assertion"), COMMON_ASSERTION_KEYS + LLM_ASSERTION_KEYS + own,
                   self.c, hints=hints)
        misspelt = not f.ok  # unknown keys, reported with their suggestion
        f.raw("type")
        for key in LLM_ASSERTION_KEYS:
            if key in item.value and not spec.llm_based:
                f.error(item.keys[key], f"'{key}' is only for LLM-based assertion types; {spec.type} is deterministic")
        name = f.take("name", "string", default=None)
        on_failure = f.take("on_failure", "string", default="continue", choices=ON_FAILURE)
        critical = f.take("critical", "boolean", default=False)
        threshold = f.take("threshold", "number", default=None, minimum=0, maximum=100)
        select = f.take("select", "string", default=None)
        if select is not None and on_transcript:
            f.error(f.raw("select"), "'select' picks part of a response; a conversation assertion judges the "
                                     "whole transcript")
        if select is not None and (problem := checks.jsonpath_error(select)):
            f.error(f.raw("select"), problem)
        params, referenced = self.params(f, spec, scope, misspelt=misspelt)
        if spec.type == "openapi" and not self.openapi_named:
            self.c.error(type_item.span, "the openapi assertion checks against the suite's OpenAPI description: "
                                         "name it with 'openapi: path/to/openapi.yaml' at the top of the suite")
        if spec.family == "scenario" and scope.scenarios is None:
            self.c.warning(type_item.span, f"{spec.type} needs scenarios, but the suite has no 'context': "
                                           "it will always be skipped")
        return Assertion(item.pos, f.field_pos, spec.type, name, on_failure, threshold, select, params,
                         critical=critical is True, files=referenced)

    def params(self, f: Fields, spec: AssertionSpec, scope: Scope, *,
               misspelt: bool = False) -> tuple[dict[str, Any], dict[str, Path]]:
        """The assertion's fields, and the files they name (resolved) by field."""
        params: dict[str, Any] = {}
        referenced: dict[str, Path] = {}
        for key, field_spec in spec.fields.items():
            item = f.raw(key)
            if item is None:
                if field_spec.required:
                    f.error(f.item, f"{with_article(spec.type)} assertion needs '{key}' ({field_spec.doc})")
                continue
            value = self.param(f, key, item, field_spec, scope, referenced)
            if value is not MISSING:
                params[key] = value
            if field_spec.templated:
                check_templates(item, scope, self.c)
        self.field_groups(f, spec, misspelt)
        return params, referenced

    def field_groups(self, f: Fields, spec: AssertionSpec, misspelt: bool) -> None:
        """exactly / at most / at least one of each group, and the fields that qualify a predicate."""
        groups = ([(g, "exactly") for g in spec.exactly_one_of] + [(g, "at most") for g in spec.at_most_one_of]
                  + [(g, "at least") for g in spec.at_least_one_of])
        for group, rule in groups:
            given = [name for name in group if f.has(name)]
            if not given and misspelt:
                continue  # the unknown key (a misspelt predicate, most likely) already says it better
            if (rule == "exactly" and len(given) != 1) or (rule == "at most" and len(given) > 1) \
                    or (rule == "at least" and not given):
                where = f.item if not given else f.item.keys[given[1]]
                got = "none" if not given else " and ".join(f"'{g}'" for g in given)
                f.error(where,
                        f"{with_article(spec.type)} assertion needs {rule} one of {', '.join(group)} (got {got})")
        if "not" in spec.fields and f.has("not"):
            negatable = {name for group in spec.exactly_one_of + spec.at_most_one_of for name in group}
            if not any(f.has(name) for name in negatable):
                f.error(f.item.keys["not"], f"'not' negates a predicate, and this {spec.type} assertion gives none")
        if "tolerance" in spec.fields and f.has("tolerance") and not f.has("approx"):
            f.error(f.item.keys["tolerance"], "'tolerance' is only for 'approx'")

    def param(self, f: Fields, name: str, item: Item, spec: FieldSpec, scope: Scope,
              referenced: dict[str, Path]) -> Any:
        kind = spec.kind
        if kind in ("string", "number", "integer", "boolean", "list", "mapping"):
            return f.check(item, name, kind, minimum=spec.minimum, maximum=spec.maximum)
        if kind == "choice":
            return f.check(item, name, "string", choices=spec.choices)
        if kind == "any":
            return item.plain()
        if kind in OPERAND_KINDS:
            value = item.plain()
            if problem := operand_problem(kind, value):
                shown = json.dumps(value) if isinstance(value, (list, dict)) else describe(value)
                f.error(item, f"'{name}' must be {problem}, not {shown}")
                return MISSING
            return value
        if kind == "status":
            value = item.plain()
            if not status_code.templated(value) and (problem := status_code.status_problem(value)):
                f.error(item, problem)
            return value
        if kind == "calls":
            return tool_calls.expected_calls(f, name, item)
        value = f.check(item, name, "mapping" if kind == "json_schema" else "string", nonempty=kind != "json_schema")
        if value is MISSING:
            return MISSING
        if kind == "regex" and (problem := checks.regex_error(value)):
            f.error(item, problem)
        elif kind == "jsonpath" and (problem := checks.jsonpath_error(value)):
            f.error(item, problem)
        elif kind == "xpath" and (problem := checks.xpath_error(value, f.raw("namespaces"))):
            f.error(item, problem)
        elif kind == "json_schema" and (problem := checks.json_schema_error(value)):
            f.error(item, problem)
        elif kind == "json_schema":
            self.warn_unchecked_formats(item, value)
            self.schema_refs(item, value, self.abs_path)
            value = self.shared_schema(value)
        elif kind == "file" and (path := self.schema_file(f, name, value)):
            referenced[name] = path
        elif kind == "function" and (path := self.function_file(f, item, value)):
            referenced[name] = path
        elif kind == "tool_definitions" and (path := tool_calls.tool_definitions(self, item, value)):
            referenced[name] = path
        elif kind == "variable" and (problem := self.variable_problem(value, scope)):
            f.error(item, problem)
        return value

    def function_file(self, f: Fields, item: Item, reference: str) -> Path | None:
        """The file of `file.py:name` (resolved), when it defines that function; else an error at `item`."""
        from litmus.assertions.python import (  # lazy: only a suite with python checks needs it (9 ms)
            defined_functions,
            split,
        )

        relative, name = split(reference)
        if not relative.endswith(".py") or not IDENTIFIER.fullmatch(name):
            f.error(item, f"'function' must be path/to/file.py:function_name, not {reference!r}")
            return None
        path = self.referenced_file(item, relative)
        if path is None:
            return None
        try:
            source = files.read_bytes(path, MAX_FILE_BYTES, shown=relative, what="python check files")
            functions = defined_functions(source.decode(), relative)
        except files.FileRefused as exc:
            f.error(item, str(exc))
            return None
        except SyntaxError as exc:
            f.error(item, f"'{relative}' line {exc.lineno}: invalid Python: {exc.msg}")
            return None
        except UnicodeDecodeError:
            f.error(item, f"'{relative}' is not UTF-8 text")
            return None
        if name not in functions:
            f.error(item, f"'{relative}' defines no top-level function '{name}'{did_you_mean(name, sorted(functions))}")
            return None
        return path

    def schema_file(self, f: Fields, name: str, relative: str) -> Path | None:
        """The schema file `relative` (resolved) when it holds a valid schema whose `$ref`s may be read; it and
        the files its `$ref`s name are parsed into `schema_documents`, once per suite."""
        item = f.raw(name)
        path = self.referenced_file(item, relative)
        if path is None:
            return None
        schema = self.schema_documents.get(str(path), MISSING)
        if schema is MISSING:
            schema = self.read_data(item, path)
            if schema is MISSING:
                return None
            if problem := checks.json_schema_error(schema):
                f.error(item, f"'{relative}': {problem}")
                return None
            self.schema_documents[str(path)] = schema  # first: a `$ref` back to this file reads it no more
            if not self.schema_refs(item, schema, path):
                del self.schema_documents[str(path)]
                return None
        self.warn_unchecked_formats(item, schema)
        return path

    def schema_refs(self, item: Item, schema: Any, base: Path) -> bool:
        """Whether every `$ref` of `schema` (read from `base`), and of the files it refers to, is one the
        run may resolve: a fragment, an `$id` of the same document, or a relative file reference the one
        file rule accepts. An error at `item` for each one that is not (nothing is fetched, ever). Each file
        is read here into `schema_documents`, where the run looks it up: it reads no file."""
        from litmus.assertions.schema import file_refs  # lazy: only a suite with schema files needs it (4 ms)

        ok = True
        pending = [(schema, base)]
        while pending:
            document, where = pending.pop()
            for ref, relative in file_refs(document):
                if relative is None:
                    self.c.error(item.span, f"schema $ref '{ref}' is not a relative file reference: only files "
                                            "inside the repository are read (no URLs, no absolute paths)")
                    ok = False
                    continue
                # Joined to its document's path as the run joins it to the document's URI: by the path as
                # written, whatever a symlink on it leads to; the file read is the one the resolver allows there.
                joined = Path(os.path.normpath(where.parent / relative))
                if str(joined) in self.schema_documents:
                    continue
                try:
                    self.fetch_file(joined)
                    path = files.resolve_found(joined, self.root, shown=relative)
                except files.FileRefused as exc:
                    self.c.error(item.span, f"schema $ref: {exc}")
                    ok = False
                    continue
                self.record_file(joined, path)
                loaded = self.read_data(item, path)
                if loaded is MISSING:
                    ok = False
                elif not isinstance(loaded, (dict, bool)):
                    self.c.error(item.span, f"schema $ref '{ref}': '{self.display(path)}' is not a JSON Schema "
                                            f"(a mapping, or true/false), it is {describe(loaded)}")
                    ok = False
                else:
                    self.schema_documents[str(joined)] = loaded
                    pending.append((loaded, joined))
        return ok

    def shared_schema(self, schema: Any) -> Any:
        """The first inline schema of this suite equal to `schema` (read only, never changed after load)."""
        try:
            key = json.dumps(schema)
        except (TypeError, ValueError):  # a YAML date, say: kept as it is
            return schema
        return self.inline_schemas.setdefault(key, schema)

    def warn_unchecked_formats(self, item: Item, schema: Any) -> None:
        if formats := checks.unchecked_formats(schema):
            listed = ", ".join(formats)
            self.c.warning(item.span, f"format {listed} is not asserted (no checker for it): any string passes it")

    def variable_problem(self, name: str, scope: Scope) -> str | None:
        if name in scope.extracted:
            return None
        known = sorted(scope.extracted)
        return f"variable '{name}' is not extracted by this step or an earlier one{did_you_mean(name, known)}"

    # -- shared rules --------------------------------------------------------------------------

    def unique(self, f: Fields, field: str, value: str, seen: dict[str, Item], what: str) -> None:
        if not value:
            return
        item = f.raw(field)
        if value in seen:
            f.error(item, f"duplicate {what} '{value}' (first at line {seen[value].pos.line})")
        else:
            seen[value] = item

    def at_most_one(self, f: Fields, names: tuple[str, ...]) -> None:
        given = [n for n in names if f.has(n)]
        if len(given) > 1:
            f.error(f.item.keys[given[1]], f"give at most one of {', '.join(names)} (got {' and '.join(given)})")


OPERAND_KINDS = ("numeric", "count", "range", "options", "nonempty_options", "tolerance")


def operand_problem(kind: str, value: Any) -> str | None:
    """What a predicate operand must be, when `value` is not that (a template is checked at run time)."""
    if isinstance(value, str) and TEMPLATE.search(value):
        return None
    if kind == "numeric":
        return None if _is_number(value) else "a number (or a template giving one)"
    if kind == "count":
        whole = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return None if whole else "a whole number 0 or more (or a template giving one)"
    if kind == "options":
        return None if isinstance(value, list) else "a list (or a template giving one)"
    if kind == "nonempty_options":
        return None if isinstance(value, list) and value else "a non-empty list (or a template giving one)"
    if kind == "tolerance":
        if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in ("abs", "rel"):
            return operand_problem("numeric", next(iter(value.values())))
        return operand_problem("numeric", value) and "a number (relative) or {abs: number}"
    # range
    if not isinstance(value, list) or len(value) != 2 or any(operand_problem("numeric", v) for v in value):
        return "a list [low, high] of two numbers (or templates)"
    if all(_is_number(v) for v in value) and value[0] > value[1]:
        return "[low, high] with low <= high"
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
