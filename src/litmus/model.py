"""The probe model: what a probe file means once loaded and validated.

Every element carries the `Position` it came from and, in `field_pos`, the positions of its
fields' values, so runs, reports and annotations can point back at the exact probe line.
Strings may still hold `{{ templates }}`: they are rendered at run time (see `litmus.run`).
The model is plain data; the loader (`litmus.load`) builds it, nothing else mutates it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from litmus.errors import Position

OnFailure = Literal["continue", "stop_request", "stop_flow"]
ExtractionKind = Literal["json_path", "header", "regex", "status", "xpath", "cookie", "url", "redirects"]
StreamFormat = Literal["sse", "ndjson", "openai", "anthropic"]
ConversationApi = Literal["openai", "anthropic", "mapping"]

# RFC 6265 section 4.1.1: a cookie name is an RFC 2616 token; a value never holds `;` (which would start
# another cookie) or a control character. Checked at load for literal values, at run time for rendered ones.
COOKIE_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
COOKIE_VALUE_REFUSED = re.compile(r"[;\x00-\x1f\x7f]")

# Marks "the field was not given", where None is a legitimate value (e.g. `json: null`).
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING", "__bool__": lambda self: False})()


@dataclass(frozen=True)
class Node:
    pos: Position
    field_pos: dict[str, Position] = field(default_factory=dict, compare=False, repr=False)

    def at(self, name: str) -> Position:
        """Position of field `name`'s value, else of the element itself."""
        return self.field_pos.get(name, self.pos)


@dataclass(frozen=True)
class Stream(Node):
    """`stream:` on a request: read the body incrementally as events (see `litmus.run.stream`)."""

    format: StreamFormat = "sse"
    # JSONPath into each event's (JSON) data giving its piece of the assembled text; None = the
    # format's own rule (openai: choices[0].delta.content, anthropic: text deltas, else the raw data).
    text_path: str | None = None
    # The end marker: an event whose data is exactly this text, or, when it starts with `$`, a JSONPath
    # that matches a true value in an event's data. None = the format's own (`[DONE]`, `message_stop`),
    # or for sse/ndjson the connection closing.
    done: str | None = None


@dataclass(frozen=True)
class UsagePaths(Node):
    """`usage: {input_path, output_path}` on a request: JSONPaths into the response (a stream's document) giving
    the tokens it used, for APIs whose `usage` is not OpenAI's or Anthropic's (see `litmus.usage`)."""

    input_path: str | None = None
    output_path: str | None = None


@dataclass(frozen=True)
class Auth(Node):
    """`auth: {basic: {username, password}}`, `auth: {digest: {username, password}}` (RFC 7616, answered by
    requests' HTTPDigestAuth) or `auth: {bearer: TOKEN}`; values may hold templates."""

    kind: Literal["basic", "digest", "bearer"] = "bearer"
    username: str = ""
    password: str = ""
    token: str = ""


@dataclass(frozen=True)
class Tls(Node):
    """`tls:` on a request or in the suite's `defaults` (a request's replaces the suite's whole). The files are
    resolved at load (inside the repository); a file holding a private key is never tracked by git."""

    verify: bool = True
    ca_file: Path | None = None
    client_cert: Path | None = None
    client_key: Path | None = None
    # The files repository-relative, by field (what the results and a curl name).
    shown: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MultipartPart(Node):
    """One part of a `multipart` body: a text field (`value`) or a file streamed from disk."""

    name: str = ""
    value: str | None = None
    # The file as resolved at load (inside the repository), and repository-relative (what a curl names).
    file: Path | None = None
    file_shown: str = ""
    filename: str | None = None
    content_type: str | None = None


@dataclass(frozen=True)
class GraphQL(Node):
    query: str = ""
    variables: Any = None
    operation_name: str | None = None


@dataclass(frozen=True)
class Request(Node):
    method: str = "GET"
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    # `cookies: {name: value}`: sent in the one Cookie header, with the flow session's own cookies.
    cookies: dict[str, str] = field(default_factory=dict)
    query: dict[str, Any] = field(default_factory=dict)
    json: Any = MISSING
    body: str | None = None
    form: dict[str, Any] | None = None
    multipart: tuple[MultipartPart, ...] | None = None
    # Resolved at load (inside the repository); its bytes are streamed as the body. Repository-relative: shown.
    body_file: Path | None = None
    body_file_shown: str = ""
    graphql: GraphQL | None = None
    auth: Auth | None = None
    tls: Tls | None = None
    # Waited before the request is first sent (rate-limited targets).
    delay_ms: float = 0
    # A 429 or 503 is waited out and the request sent again: None = for idempotent methods only, True = for
    # any method, False = never (the step sees the 429 itself).
    retry_on_429: bool | None = None
    timeout_ms: float = 30_000
    follow_redirects: bool = True
    stream: Stream | None = None
    usage: UsagePaths | None = None
    # The `pricing:` entry's model to price this request's tokens with when the response names no model the
    # table prices (a priced model the response names wins: see litmus.usage).
    pricing_model: str | None = None


@dataclass(frozen=True)
class Extraction(Node):
    name: str = ""
    kind: ExtractionKind = "json_path"
    # The JSONPath, header name, regex, XPath or cookie name; empty for `status`, `url` and `redirects`.
    expr: str = ""
    group: int | str = 0


@dataclass(frozen=True)
class Retry(Node):
    attempts: int = 1
    interval_ms: float = 1000


@dataclass(frozen=True)
class Assertion(Node):
    type: str = ""
    name: str | None = None
    on_failure: OnFailure = "continue"
    # LLM-based types only: percent, None = the judge default.
    threshold: float | None = None
    # LLM-based types only: JSONPath choosing what to judge, None = whole body text.
    select: str | None = None
    # The type's own fields (`expected`, `path`, `rubric`, ...), validated against its spec.
    params: dict[str, Any] = field(default_factory=dict)
    # `critical: true`: when it does not pass, its flow run fails whatever the Intent Evaluation says.
    critical: bool = False
    # The files its fields name (`schema_file`, the file of `function`), by field: resolved once, at load
    # (`litmus.files`), so the run reads what was checked.
    files: dict[str, Path] = field(default_factory=dict)


@dataclass(frozen=True)
class Simulate(Node):
    """User turns played by the simulator (templates in `persona` and `goal` are rendered per flow run)."""

    persona: str = ""
    goal: str = ""
    max_turns: int = 1


@dataclass(frozen=True)
class Step(Node):
    name: str = ""
    # In a conversation flow: the conversation's request with the step's own `request` fields merged in.
    request: Request | None = None
    extract: tuple[Extraction, ...] = ()
    retry: Retry | None = None
    assertions: tuple[Assertion, ...] = ()
    # A conversation step says what the user says (`user`, a template) or lets the simulator say it.
    user: str | None = None
    simulate: Simulate | None = None
    # Tool name -> the value answered for each of its calls in this step's reply.
    tool_results: dict[str, Any] | None = None
    # `skip:` in the probe: why the step is reported `skipped` instead of sent (None: it runs).
    skip: str | None = None


@dataclass(frozen=True)
class ConversationFormat(Node):
    """How the history is sent and the reply read: an API's own shape, or the mapping form."""

    api: ConversationApi = "openai"
    # The mapping form: where the history goes in the JSON body (`$.a.b`), where the reply is read.
    history_path: str | None = None
    reply_path: str | None = None
    # `history: none`: the server keeps the conversation; each turn sends only its new message.
    history: bool = True


@dataclass(frozen=True, kw_only=True)
class Conversation(Node):
    format: ConversationFormat
    system: str | None = None


@dataclass(frozen=True)
class Flow(Node):
    name: str = ""
    runs: int = 1
    steps: tuple[Step, ...] = ()
    # A chat: each step's request is `conversation.request` (merged into the steps) plus the history.
    conversation: Conversation | None = None
    # Judged on the transcript, once per flow run.
    conversation_assertions: tuple[Assertion, ...] = ()
    # `skip:` in the probe: why every run of the flow is reported `skipped` (None: it runs).
    skip: str | None = None
    # The flow's own `scenarios` / `scenarios_file`: they replace the suite's `context` scenarios for it.
    context: Context | None = None


@dataclass(frozen=True)
class Scenario(Node):
    id: str = ""
    # Loaded from `data_file` when that was given.
    data: Any = None
    # Loaded from `reference_response_file` when that was given.
    reference_response: str | None = None
    data_file: str | None = None
    reference_response_file: str | None = None


@dataclass(frozen=True)
class Context(Node):
    name: str | None = None
    # The inline `scenarios`; rows of `scenarios_file` follow them and are read as the run goes.
    scenarios: tuple[Scenario, ...] = ()
    scenarios_file: Path | None = None
    # Repository-relative, for positions of its rows.
    scenarios_file_display: str = ""
    # Rows counted (and checked) at load.
    file_rows: int = 0

    @property
    def count(self) -> int:
        return len(self.scenarios) + self.file_rows


@dataclass(frozen=True)
class SuiteJudge(Node):
    threshold: float | None = None


@dataclass(frozen=True)
class RateLimit(Node):
    """`rate_limit:` of a suite: requests per second to each origin it sends to (`per_minute` / 60), and
    how many may go at once after a quiet spell (`burst`)."""

    per_second: float = 1.0
    burst: int = 1


@dataclass(frozen=True)
class Suite(Node):
    name: str = ""
    # The file as a repository-relative POSIX path (what SARIF and links use).
    file: str = ""
    # The file on disk (its real path), for resolving `schema_file` and friends.
    abs_path: Path = Path()
    version: int = 1
    intent: str | None = None
    pass_threshold: float = 100
    base_url: str | None = None
    # Request fields merged into every step (headers merged key by key, the step winning).
    defaults: Request | None = None
    variables: dict[str, Any] = field(default_factory=dict)
    judge: SuiteJudge | None = None
    context: Context | None = None
    flows: tuple[Flow, ...] = ()
    # Run once per run of the suite, before any flow run / after every flow run ended.
    setup: tuple[Step, ...] = ()
    teardown: tuple[Step, ...] = ()
    # Flow runs one at a time, in file order.
    serial: bool = False
    rate_limit: RateLimit | None = None
    # Every file the suite reads, repository-relative POSIX: its own, then each file its fields name (python
    # checks, schema files and the files their `$ref`s name, scenario, data and reference files, files a
    # request sends), as written and, when a symlink leads elsewhere, where it leads. Recorded where the loader
    # resolves each one: what `changed-only` and "changes its own checks" compare with a PR's changed files.
    referenced_files: tuple[str, ...] = ()
    # The JSON Schemas its `schema` assertions use from files: each `schema_file` (by its real path, as in
    # `Assertion.files`) and each file a `$ref` names (by the path the `$ref` leads to), parsed at load by the
    # one YAML reader. The run validates with these and reads no schema file again.
    schema_documents: dict[str, Any] = field(default_factory=dict, repr=False)
    # The tool definitions its `tool_calls` assertions validate arguments with: each `schema_file` (by its real
    # path, as in `Assertion.files`) as {tool name: its `parameters` JSON Schema}, read and checked at load.
    tool_definitions: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    # The OpenAPI description its `openapi:` names (litmus.openapi.document.OpenAPIDocument), loaded once at
    # load through the one resolver; the `openapi` assertion checks against it, and results count its coverage.
    openapi: Any = field(default=None, repr=False)

    def context_of(self, flow: Flow) -> Context | None:
        """Where `flow`'s scenarios come from: its own, else the suite's `context`."""
        return flow.context or self.context

    @property
    def contexts(self) -> tuple[Context, ...]:
        """Every source of scenarios: the suite's `context` and each flow's own."""
        return tuple(c for c in (self.context, *(flow.context for flow in self.flows)) if c is not None)

    @property
    def steps(self) -> tuple[Step, ...]:
        """Every step the suite runs: setup, each flow's, teardown."""
        return (*self.setup, *(step for flow in self.flows for step in flow.steps), *self.teardown)
