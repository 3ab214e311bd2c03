"""The `{{ name | filter }}` templates: syntax, filters, generators and rendering, in one place.

The loader checks templates statically (`litmus.load.templates`: which names a place may use,
filters and their arity); the runner renders them with a `Renderer`. A template is `{{`, a
dotted name, optional `| filter` or `| filter(ARG)` calls chained left to right, `}}`. Names:
bare names (extracted variables, suite `variables`), `env.NAME`, `secrets.NAME`, `vars.NAME`
(`--var` / `--vars-file`), `setup.NAME` (extracted by the suite's setup), `scenario.id`,
`scenario.data.<path>`, `scenario.reference_response`, `run.index`, and the generators
`gen.uuid`, `gen.now`, `gen.timestamp`, `gen.random_int`, `gen.random_string`.

A string that is exactly one template keeps the value's type (`"{{ scenario.data.order_id }}"`
gives the number 1042); templates inside a longer string are replaced by their text (strings as
they are, other values as JSON). Resolving `secrets.NAME` registers the value, and every value a
filter derives from it (`| base64`), for redaction; so does `env.NAME` unless the run's `Trust` lists
NAME in env-allow. The `Trust` also decides which names `env.`/`secrets.` may read at all
(`Trust.refusal`): a refused name is an error that no `default(VALUE)` turns into a value.
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import json
import math
import re
import secrets as _random
import string
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from litmus.text import clip, did_you_mean
from litmus.trust import Trust

# Anything between {{ and }} is a template; whether its content is a valid expression is checked
# after, so `{{ 1bad }}` is reported as an error rather than silently left in the text.
TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*")
NAMESPACES = ("env", "secrets", "vars", "setup", "scenario", "run", "gen")
GENERATORS = ("uuid", "now", "timestamp", "random_int", "random_string")
_FILTER_CALL = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*", re.DOTALL)

# One rendered value may not exceed this many characters, a structured one (a whole template keeps
# its type) measured as the JSON a request body would carry: suite variables that refer to each
# other, or one extracted object used many times, can otherwise grow without bound.
MAX_RENDERED_CHARS = 1024 * 1024
# Suite variables may themselves hold templates; this bounds a variable that refers to itself.
_MAX_DEPTH = 8


class TemplateError(ValueError):
    """A template cannot be rendered (the message names the template and why)."""


class MissingName(TemplateError):
    """The template names something unset (an environment variable, a variable, a data path):
    the one failure a `default(VALUE)` filter turns into a value."""


@dataclass(frozen=True)
class FilterCall:
    name: str
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Reference:
    """One `{{ ... }}` in a string: its name, its filters and its offset span in the string."""

    name: str
    start: int
    end: int
    filters: tuple[FilterCall, ...] = ()
    # Why the filter part does not parse (None: it does); the name's validity is `valid`.
    filter_problem: str | None = None
    text: str = field(default="", compare=False)

    @property
    def valid(self) -> bool:
        return NAME.fullmatch(self.name) is not None

    @property
    def namespace(self) -> str | None:
        head = self.name.split(".", 1)[0]
        return head if head in NAMESPACES and "." in self.name else None

    def problem(self) -> str | None:
        """Why the template cannot work wherever it is (syntax, unknown filter, arity), else None."""
        if not self.valid:
            return f"'{{{{ {self.name} }}}}' is not a valid template name (letters, digits, _ and dots)"
        if self.filter_problem:
            return self.filter_problem
        for call in self.filters:
            spec = FILTERS.get(call.name)
            if spec is None:
                return f"unknown filter '{call.name}' in '{self.text}'{did_you_mean(call.name, FILTERS)}"
            if len(call.args) != spec.arity:
                wanted = "no argument" if spec.arity == 0 else f"{spec.arity} argument" + "s" * (spec.arity > 1)
                return f"filter '{call.name}' takes {wanted}, got {len(call.args)} (in '{self.text}')"
            refused = spec.check(*call.args) if spec.check else None
            if refused:
                return f"filter '{call.name}': {refused} (in '{self.text}')"
        if self.namespace == "gen" and self.name.split(".", 1)[1] not in GENERATORS:
            return f"unknown generator '{self.name}' (one of {', '.join('gen.' + g for g in GENERATORS)})"
        return None


def parse(inner: str, start: int = 0, end: int = 0) -> Reference:
    """The Reference for the text between `{{` and `}}`."""
    parts = _split_pipes(inner)
    name = parts[0].strip()
    filters: list[FilterCall] = []
    problem = None
    for part in parts[1:]:
        match = _FILTER_CALL.fullmatch(part)
        if match is None:
            problem = f"'{part.strip()}' is not a filter call (name or name(ARG)) in '{{{{{inner}}}}}'"
            break
        try:
            text = match.group(2)
            args = () if text is None else tuple(_argument(a.strip()) for a in _split_arguments(text))
        except ValueError as exc:
            problem = f"filter '{match.group(1)}': {exc} (in '{{{{{inner}}}}}')"
            break
        filters.append(FilterCall(match.group(1), args))
    return Reference(name, start, end, tuple(filters), problem, "{{" + inner + "}}")


def _split_pipes(text: str) -> list[str]:
    """`text` split at the `|` outside quotes and brackets."""
    return _split_outside(text, "|")


def _split_arguments(text: str) -> list[str]:
    """`text` split at the commas outside quotes and brackets (`replace(', ', '-')` has two arguments)."""
    return _split_outside(text, ",")


def _split_outside(text: str, separator: str) -> list[str]:
    """`text` split at each `separator` that is outside quotes and outside `[...]` / `{...}`."""
    parts, current, quote_char, depth = [], [], None, 0
    for char in text:
        if quote_char:
            quote_char = None if char == quote_char else quote_char
        elif char in "\"'":
            quote_char = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _argument(text: str) -> Any:
    """A filter argument: a JSON literal ("text", 3, true, null) or 'single-quoted text'."""
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        raise ValueError(f"argument {text!r} is not a quoted string, a number, true, false or null") from None


def references(text: str) -> tuple[Reference, ...]:
    """The templates in `text`, in order. Cached for strings of a probe's size: every flow run
    renders the same ones (a long text, e.g. a whole suite's repr scanned for secrets, is not kept)."""
    return _cached_references(text) if len(text) <= _CACHED_CHARS else _references(text)


_CACHED_CHARS = 4096


def _references(text: str) -> tuple[Reference, ...]:
    return tuple(parse(match.group(1), match.start(), match.end()) for match in TEMPLATE.finditer(text))


_cached_references = functools.lru_cache(maxsize=4096)(_references)


def whole_template(text: str) -> Reference | None:
    """The reference when `text` is exactly one template (its value keeps its type), else None."""
    match = TEMPLATE.fullmatch(text.strip())
    # `{{ a }}-{{ b }}` also "fully matches" (the lazy group stretches over `}}-{{`): that is two templates.
    if match is None or "}}" in match.group(1):
        return None
    return parse(match.group(1), match.start(), match.end())


# -- filters -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FilterSpec:
    arity: int
    apply: Callable[..., Any]
    # A lower bound of the output length from the input length, for the load-time size check
    # (None: the output may be shorter than any bound, e.g. `length`).
    grows: Callable[[int], int] | None = None
    # Why the arguments cannot work whatever the value (None: they can), checked at load and render.
    check: Callable[..., str | None] | None = None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _to_int(value: Any) -> int:
    if isinstance(value, bool):
        raise TemplateError(f"filter 'int': {value!r} is a boolean, not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise TemplateError(f"filter 'int': {_short(value)} is not an integer")


def _to_float(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise TemplateError(f"filter 'float': {_short(value)} is not a number")


def _length(value: Any) -> int:
    if isinstance(value, (str, list, dict)):
        return len(value)
    raise TemplateError(f"filter 'length': {_short(value)} has no length (a string, list or mapping has)")


def _short(value: Any) -> str:
    text = _text(value)
    return repr(clip(text, 40))


def _same(n: int) -> int:
    return n


def _split(value: Any, separator: str) -> list[str]:
    return _text(value).split(separator)


def _nth(value: Any, index: int) -> Any:
    if not isinstance(value, list):
        raise TemplateError(f"filter 'nth': {_short(value)} is not a list (split a text first)")
    if index >= len(value):
        raise TemplateError(f"filter 'nth': index {index} is past the end of a list of {len(value)} (0-based)")
    return value[index]


def _replace(value: Any, old: str, new: str) -> str:
    text = _text(value)
    # Measured before it is built: `replace('a', <long text>)` on a long text of `a`s multiplies it.
    size = len(text) + text.count(old) * (len(new) - len(old))
    if size > MAX_RENDERED_CHARS:
        raise TemplateError(f"filter 'replace' would give {size:,} characters (at most {MAX_RENDERED_CHARS:,})")
    return text.replace(old, new)


def _regex(value: Any, pattern: str) -> str:
    from litmus.assertions._common import EvaluationTimeout, search  # lazy: only a suite with a regex filter

    try:
        # The search is bounded like an extraction's: a pattern that backtracks catastrophically ends.
        found = search(pattern, _text(value))
    except EvaluationTimeout as exc:
        raise TemplateError(f"filter 'regex': {exc}") from None
    if found is None:
        raise TemplateError(f"filter 'regex': /{pattern}/ does not match {_short(value)}")
    return found.group(1) if found.re.groups else found.group(0)


def _regex_problem(pattern: Any) -> str | None:
    if not isinstance(pattern, str):
        return "the pattern must be text"
    import regex as engine  # lazy: regex: ~30 ms, only for a suite with a regex filter

    from litmus.assertions._common import regex  # lazy: only a suite with a regex filter

    try:
        regex(pattern)
    except engine.error as exc:
        return f"invalid regular expression: {exc}"
    return None


_EPOCH = re.compile(r"\s*-?\d+(?:\.\d+)?\s*")


def _moment(value: Any, name: str) -> tuple[datetime, bool]:
    """The moment `value` names (ISO-8601 text, or epoch seconds as a number or numeric text) and
    whether it was epoch seconds; a value out of datetime's range is an error, never a crash."""
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, UTC), True
        if isinstance(value, str) and _EPOCH.fullmatch(value):
            return datetime.fromtimestamp(float(value), UTC), True
        if isinstance(value, str):
            return datetime.fromisoformat(value.strip()), False
    except (ValueError, OverflowError, OSError):
        pass
    raise TemplateError(f"filter '{name}': {_short(value)} is not an ISO-8601 date-time or epoch seconds "
                        "(years 1 to 9999)")


def _date(value: Any, form: str) -> str:
    moment, _ = _moment(value, "date")
    try:
        # A moment written without an offset is read as UTC (what `%z` then says).
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).strftime(form)
    except ValueError as exc:
        raise TemplateError(f"filter 'date': format {form!r}: {exc}") from None


def _add_seconds(value: Any, seconds: int | float) -> Any:
    moment, epoch = _moment(value, "add_seconds")
    if epoch:
        total = float(value) + seconds
        return int(total) if total.is_integer() and not isinstance(value, float) else total
    try:
        later = moment + timedelta(seconds=seconds)
    except OverflowError:
        raise TemplateError(f"filter 'add_seconds': {_short(value)} plus {seconds} seconds is past year 9999 "
                            "or before year 1") from None
    text = later.isoformat(timespec="milliseconds" if later.microsecond else "seconds")
    return text.replace("+00:00", "Z") if value.strip().endswith("Z") else text


def _text_arguments(*args: Any) -> str | None:
    return None if all(isinstance(a, str) for a in args) else "the arguments must be text"


def _separator_problem(separator: Any) -> str | None:
    return None if isinstance(separator, str) and separator else "the separator must be non-empty text"


def _index_problem(index: Any) -> str | None:
    ok = isinstance(index, int) and not isinstance(index, bool) and index >= 0
    return None if ok else "the index must be a whole number from 0 (the first item)"


def _seconds_problem(seconds: Any) -> str | None:
    ok = isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and math.isfinite(seconds)
    return None if ok else "the seconds must be a finite number"


FILTERS: dict[str, FilterSpec] = {
    # Everything but RFC 3986's unreserved characters, so a value cannot change the path or query.
    "urlencode": FilterSpec(0, lambda v: quote(_text(v), safe=""), _same),
    "base64": FilterSpec(0, lambda v: base64.b64encode(_text(v).encode()).decode(), _same),
    # As in JWTs: the URL-safe alphabet without `=` padding.
    "base64url": FilterSpec(0, lambda v: base64.urlsafe_b64encode(_text(v).encode()).decode().rstrip("="), _same),
    "json": FilterSpec(0, lambda v: json.dumps(v, ensure_ascii=False), _same),
    "string": FilterSpec(0, _text, _same),
    "int": FilterSpec(0, _to_int),
    "float": FilterSpec(0, _to_float),
    "lower": FilterSpec(0, lambda v: _text(v).lower(), _same),
    "upper": FilterSpec(0, lambda v: _text(v).upper(), _same),
    "trim": FilterSpec(0, lambda v: _text(v).strip()),
    "length": FilterSpec(0, _length),
    "sha256": FilterSpec(0, lambda v: hashlib.sha256(_text(v).encode()).hexdigest(), lambda n: 64),
    # Applied by the Renderer itself: it stands in for a missing name and passes any other value on.
    "default": FilterSpec(1, lambda v, fallback: v, _same),
    "split": FilterSpec(1, _split, check=_separator_problem),
    # 0-based, like every index in a JSON path.
    "nth": FilterSpec(1, _nth, check=_index_problem),
    "replace": FilterSpec(2, _replace, check=_text_arguments),
    "regex": FilterSpec(1, _regex, check=_regex_problem),
    "date": FilterSpec(1, _date, check=_text_arguments),
    "add_seconds": FilterSpec(1, _add_seconds, check=_seconds_problem),
}


def generate(name: str) -> Any:
    """A fresh value of generator `name` (one of GENERATORS)."""
    if name == "uuid":
        return str(uuid.uuid4())
    if name == "now":
        return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if name == "timestamp":
        return int(time.time())
    if name == "random_int":
        return _random.randbelow(1_000_000_000)
    alphabet = string.ascii_letters + string.digits
    return "".join(_random.choice(alphabet) for _ in range(16))


# -- rendering ---------------------------------------------------------------------------------


class Renderer:
    """Resolves what one flow run (or setup/teardown) can see and renders templates with it.

    `generated` holds the generator values of the current step (`begin_step` starts a new one):
    within a step, `gen.uuid` is one value wherever it appears, so the URL and the body agree.
    """

    def __init__(
        self,
        suite: Any,
        *,
        scenario: Any = None,
        run_index: int = 0,
        variables: Mapping[str, Any],
        environ: Mapping[str, str],
        redactor: Any,
        run_vars: Mapping[str, Any] | None = None,
        setup: Mapping[str, Any] | None = None,
        trust: Trust | None = None,
    ) -> None:
        self.suite = suite
        self.suite_variables: Mapping[str, Any] = suite.variables
        self.scenario = scenario
        self.run_index = run_index
        # Extracted so far in this flow run; the caller keeps adding to it.
        self.variables = variables
        self.environ = environ
        self.redactor = redactor
        self.run_vars = run_vars or {}
        self.setup = setup
        self.trust = trust or Trust.local()
        self.generated: dict[str, Any] = {}
        # LLM-based assertions of one step render in the judge's threads at the same time.
        self._lock = threading.Lock()

    def begin_step(self) -> dict[str, Any]:
        self.generated = {}
        return self.generated

    def seeing(self, variables: Mapping[str, Any]) -> Renderer:
        """This renderer with `variables` as the extracted variables (a step's own, for its assertions);
        the step's generator values and the lock stay shared, so a uuid is one value in the step."""
        other = copy.copy(self)
        other.variables = variables
        return other

    def render(self, value: Any) -> Any:
        """`value` with every template in its strings (and nested lists/mappings) resolved."""
        # Suite variables are rendered once per call (`memo`): ten uses of a variable cost one rendering.
        rendered = self._render(value, 0, {})
        if rendered is not value:
            _check_size(rendered, value)
        return rendered

    def _render(self, value: Any, depth: int, memo: dict[str, Any]) -> Any:
        if isinstance(value, str):
            return self._render_text(value, depth, memo) if "{{" in value else value
        if isinstance(value, Mapping):
            # A key is text whatever its template gives (`{{ scenario.data.items }}` may be a list).
            return {_key(self._render(k, depth, memo)): self._render(v, depth, memo) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._render(v, depth, memo) for v in value]
        return value

    def _render_text(self, text: str, depth: int, memo: dict[str, Any]) -> Any:
        whole = whole_template(text)
        if whole is not None:
            return self._evaluate(whole, depth, memo)
        pieces, last, size = [], 0, 0
        for ref in references(text):
            value = self._evaluate(ref, depth, memo)
            _check_size(value, text)  # before `_text` writes out a structure that shares one part many times
            piece = _text(value)
            pieces += [text[last:ref.start], piece]
            size += ref.start - last + len(piece)
            last = ref.end
            if size > MAX_RENDERED_CHARS:
                break
        pieces.append(text[last:])
        rendered = "".join(pieces)
        if len(rendered) > MAX_RENDERED_CHARS:
            raise TemplateError(f"a rendered string would exceed {MAX_RENDERED_CHARS} characters "
                                f"(templates in {_short(text)})")
        return rendered

    def _evaluate(self, ref: Reference, depth: int, memo: dict[str, Any]) -> Any:
        problem = ref.problem()
        if problem:
            raise TemplateError(problem)
        try:
            value = self._lookup(ref.name, depth, memo)
        except MissingName:
            defaults = [i for i, call in enumerate(ref.filters) if call.name == "default"]
            if not defaults:
                raise
            value = ref.filters[defaults[0]].args[0]
            calls = ref.filters[defaults[0] + 1:]
            register = None  # the probe's own fallback text is no secret
        else:
            calls = ref.filters
            register = self._masking(ref.name)
        for call in calls:
            if call.name != "default":
                value = FILTERS[call.name].apply(value, *call.args)
                if register:
                    register(_text(value))
        return value

    def _masking(self, name: str) -> Callable[[str], None] | None:
        """How the value of template name `name` (and what its filters derive) is registered for
        redaction; None: it is not masked."""
        head, _, rest = name.partition(".")
        if head == "secrets" and rest:
            return self.redactor.register
        if head == "env" and rest and self.trust.masks_env(rest):
            return self.redactor.register_env
        return None

    def _lookup(self, name: str, depth: int, memo: dict[str, Any]) -> Any:
        head, _, rest = name.partition(".")
        if head in ("env", "secrets") and rest:
            refused = self.trust.refusal(rest)
            if refused:
                # Not a MissingName: a `default` must not stand in where someone thought they sent a token.
                raise TemplateError(f"'{{{{ {name} }}}}': {refused}")
            if rest not in self.environ:
                raise MissingName(f"environment variable {rest} is not set (template '{{{{ {name} }}}}')")
            value = self.environ[rest]
            register = self._masking(name)
            if register:
                register(value)
            return value
        if head == "vars" and rest:
            if rest not in self.run_vars:
                raise MissingName(f"run variable '{rest}' is not set (give --var {rest}=VALUE or --vars-file)")
            return self.run_vars[rest]
        if head == "setup" and rest:
            if self.setup is None or rest not in self.setup:
                raise MissingName(f"'{{{{ {name} }}}}': the suite's setup did not extract '{rest}'")
            return self.setup[rest]
        if head == "gen" and rest:
            with self._lock:
                if rest not in self.generated:
                    self.generated[rest] = generate(rest)
                return self.generated[rest]
        if head == "scenario" and rest:
            return self._scenario_value(name, rest)
        if head == "run" and rest == "index":
            return self.run_index
        if name in self.variables:
            return self.variables[name]
        if name in self.suite_variables:
            if name not in memo:
                if depth >= _MAX_DEPTH:
                    raise TemplateError(f"variable '{name}' refers to itself through templates")
                memo[name] = self._render(self.suite_variables[name], depth + 1, memo)
            return memo[name]
        raise MissingName(f"unknown template name '{name}' (not a suite variable, nor extracted by an earlier step)")

    def _scenario_value(self, name: str, rest: str) -> Any:
        if self.scenario is None:
            raise TemplateError(f"'{{{{ {name} }}}}' needs a scenario, and this flow run has none")
        field_name, _, path = rest.partition(".")
        if field_name == "id" and not path:
            return self.scenario.id
        if field_name == "reference_response" and not path:
            if self.scenario.reference_response is None:
                raise MissingName(f"scenario '{self.scenario.id}' has no reference_response")
            return self.scenario.reference_response
        if field_name != "data":
            raise TemplateError(f"unknown scenario field in '{name}' (id, data.<path>, reference_response)")
        value = self.scenario.data
        for key in path.split(".") if path else ():
            if isinstance(value, Mapping) and key in value:
                value = value[key]
            elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
                value = value[int(key)]
            else:
                raise MissingName(f"scenario '{self.scenario.id}' data has no '{path}' ('{name}')")
        return value


def _json_size(value: Any, limit: int) -> int:
    """The length of `value` as JSON, counted only until it passes `limit`: a structure that holds
    one part many times (each use of a variable is the same object) is measured, never written out."""
    size, pending = 0, [value]
    while pending and size <= limit:
        item = pending.pop()
        if isinstance(item, Mapping):
            size += 2 + 4 * len(item)  # braces, and per entry ': ' plus ', '
            for key, entry in item.items():
                size += len(_text(str(key))) + 2
                pending.append(entry)
        elif isinstance(item, (list, tuple)):
            size += 2 + 2 * len(item)
            pending.extend(item)
        elif isinstance(item, str):
            size += len(item) + 2  # quotes; escapes are not counted, the cap is generous enough for them
        else:
            size += len(json.dumps(item, ensure_ascii=False, default=str))
    return size


def _check_size(value: Any, source: Any) -> None:
    """A TemplateError naming the templates of `source` when they render it (to `value`) past the cap;
    a probe's own literal text is not rendering and is not capped here."""
    size = _json_size(value, MAX_RENDERED_CHARS)
    if size > MAX_RENDERED_CHARS and references(repr(source)):
        raise TemplateError(f"{_templates_in(source)} would render to over {size:,} characters as JSON "
                            f"(at most {MAX_RENDERED_CHARS:,})")


def _templates_in(source: Any) -> str:
    """The templates of an unrendered value, each once with how often it is used: what the error names."""
    pending, uses = [source], Counter()
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            uses.update(ref.text for ref in references(item))
        elif isinstance(item, Mapping):
            pending += [*item.keys(), *item.values()]
        elif isinstance(item, (list, tuple)):
            pending += item
    named = [text if count == 1 else f"{text} ({count} times)" for text, count in sorted(uses.items())]
    return ", ".join(named[:5]) + (f" and {len(named) - 5} more" if len(named) > 5 else "")


def _key(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) or value is None else _text(value)
