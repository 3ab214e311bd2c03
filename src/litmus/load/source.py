"""Reading a YAML file into a positioned tree, refusing anything unsafe or ambiguous.

PyYAML's safe loader composes the document into nodes, which keep their marks; we then build our
own `Item` tree from the nodes so every value keeps its position. On the way we reject what PyYAML
would accept silently or dangerously: files over `MAX_FILE_BYTES`, non-UTF-8 or binary content,
duplicate mapping keys (PyYAML keeps the last one), nesting deeper than `MAX_DEPTH`, alias expansion
past `MAX_ALIAS_NODES` (the "billion laughs" file), recursive aliases, and tags other than the core
YAML ones.

Decisions (documented in docs/probe-format.md): mapping keys are always strings (their source
text: JSON needs string keys, and `on:`/`yes:` keys stay words); YAML timestamps stay strings
(`eta: 2026-12-03` is the text "2026-12-03", as it would be in a JSON body); `<<` merge keys work.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from litmus import files
from litmus.errors import Position
from litmus.files import MAX_FILE_BYTES
from litmus.load.diagnostics import Collector, Span

MAX_DEPTH = 100
MAX_ALIAS_NODES = 100_000

_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_CORE + t for t in ("str", "int", "float", "bool", "null", "timestamp")}
_MERGE = _CORE + "merge"
_STR = _CORE + "str"
_TIMESTAMP = _CORE + "timestamp"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_NO_KEYS: Mapping[str, Any] = MappingProxyType({})


class SourceError(Exception):
    """The file cannot be read as YAML; carries the one positioned reason."""

    def __init__(self, span: Span, message: str) -> None:
        super().__init__(message)
        self.span = span
        self.message = message


@dataclass(eq=False, slots=True)
class Item:
    """A YAML value with its position. Mappings hold `dict[str, Item]`, sequences `list[Item]`.

    There is one per value of the file (100,000 for a 1 MB suite): slots, and no dict of its own for
    the keys of a scalar, make the tree a third smaller.
    """

    value: Any
    span: Span
    # For mappings: each key as an Item (its value is the key text), for "unknown key" messages.
    keys: Mapping[str, Item] = field(default_factory=lambda: _NO_KEYS)

    @property
    def pos(self) -> Position:
        return self.span.pos

    def plain(self) -> Any:
        """The value as plain Python data (dicts, lists, scalars)."""
        if isinstance(self.value, dict):
            return {k: v.plain() for k, v in self.value.items()}
        if isinstance(self.value, list):
            return [v.plain() for v in self.value]
        return self.value


def read_yaml(path: Path, display: str, collector: Collector) -> Item | None:
    """The document of `path` (a real path from `litmus.files`) as an Item (None for an empty
    document); SourceError if it cannot be read."""
    try:
        data = files.read_bytes(path, MAX_FILE_BYTES, shown=display, what="probe files")
    except files.FileRefused as exc:
        raise SourceError(Span(Position(display, 1, 1)), str(exc)) from None
    return parse_yaml(data, display, collector)


def parse_yaml(data: bytes, display: str, collector: Collector) -> Item | None:
    text = _decode(data, display)
    collector.add_source(display, text)
    try:
        with _yaml_errors(text, display):
            return _EventBuilder(display, text, collector).document()
    except _NeedsNodes:
        pass
    # Anchors, aliases, merge keys or several documents: composed into nodes first (aliases share them).
    node, has_aliases = _compose(text, display)
    if node is None:
        return None
    return _Builder(display, text, collector, release=not has_aliases).build(node)


def _decode(data: bytes, display: str) -> str:
    if b"\0" in data:
        raise SourceError(_span_at(data.decode("utf-8", "replace"), data.index(b"\0"), display),
                          "file is binary (it contains NUL bytes), not YAML text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start].decode("utf-8", "replace")
        raise SourceError(_span_at(prefix, len(prefix), display),
                          f"file is not UTF-8 text (byte 0x{data[exc.start]:02x} cannot be decoded)") from None
    return text.removeprefix("\ufeff")


def _span_at(text: str, index: int, display: str) -> Span:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return Span(Position(display, line, column), 1)


def _compose(text: str, display: str) -> tuple[yaml.Node | None, bool]:
    """The document's root node, and whether the document uses aliases."""
    with _yaml_errors(text, display):
        has_aliases = _check_events(text, display)
        return yaml.compose(text, Loader=_Loader), has_aliases


@contextmanager
def _yaml_errors(text: str, display: str) -> Iterator[None]:
    """PyYAML's errors while parsing `text`, as one positioned SourceError."""
    try:
        yield
    except yaml.MarkedYAMLError as exc:
        raise _marked_error(exc, display) from None
    except yaml.reader.ReaderError as exc:
        raise SourceError(_span_at(text, exc.position, display),
                          f"invalid YAML: character {exc.character!r} is not allowed") from None
    except yaml.YAMLError as exc:
        raise SourceError(Span(Position(display, 1, 1)), f"invalid YAML: {exc}") from None
    except RecursionError:
        raise SourceError(Span(Position(display, 1, 1)), f"invalid YAML: nested deeper than {MAX_DEPTH}") from None


def _marked_error(exc: yaml.MarkedYAMLError, display: str) -> SourceError:
    """PyYAML's error at its most useful place. A quote left open is found only where the scanner runs out
    (the end of the file, or a `---` line): that is reported as where it gave up, and the error points at the
    opening quote, which is what needs fixing."""
    start, end = exc.context_mark, exc.problem_mark
    if (exc.context == "while scanning a quoted scalar" and start and end
            and exc.problem and exc.problem.startswith("found unexpected")):
        met = "the end of the file" if "end of stream" in exc.problem else "a document marker (--- or ...)"
        return SourceError(Span(Position(display, start.line + 1, start.column + 1), 1),
                           f"invalid YAML: this quoted string is never closed (the scanner looked for its closing "
                           f"quote up to {display}:{end.line + 1}:{end.column + 1}, {met})")
    mark = end or start
    message = " ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    return SourceError(Span(Position(display, line, column), 1), f"invalid YAML: {message}")


def _check_events(text: str, display: str) -> bool:
    """Refuse deep nesting before composing: libyaml's composer recurses in C and would crash.

    Returns whether the document has aliases (then a node can be reached more than once).
    """
    depth = 0
    has_aliases = False
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise SourceError(Span(_pos(event.start_mark, display), 1),
                                  f"the document nests deeper than {MAX_DEPTH} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        elif isinstance(event, yaml.AliasEvent):
            has_aliases = True
    return has_aliases


def _line_lengths(text: str) -> array:
    """The length of each line of `text`, as `str.splitlines` cuts them: what a span over several lines
    underlines to. Not the lines themselves (3.4 MB for a 1 MB suite, 0.2 MB as lengths)."""
    return array("I", map(len, text.splitlines()))


def _pos(mark: yaml.Mark, display: str) -> Position:
    return Position(display, mark.line + 1, mark.column + 1)


class _NeedsNodes(Exception):
    """The document needs the node-based path: it has anchors or aliases, merge keys, or more than one document."""


class _EventBuilder:
    """Builds the Item tree straight from the parser's events, in one pass: no separate depth pass and no
    node tree (about 350 bytes a value) next to the Items. It takes the documents most probe files are:
    anything it does not handle (`_NeedsNodes`) goes the node-based way, which gives the same Items and
    diagnostics; so do the diagnostics of this builder, kept until the whole file has parsed (a syntax
    error anywhere is then the only one, as when the file is composed first)."""

    def __init__(self, display: str, text: str, collector: Collector) -> None:
        self.display = display
        self.collector = collector
        self.line_lengths = _line_lengths(text)
        self.loader = _Loader(text)
        self.constructor = yaml.constructor.SafeConstructor()
        self.errors: list[tuple[Span, str] | None] = []  # None: a collection's tag error, placed once it closes
        self.resolved: dict[tuple[str, tuple[bool, bool]], str] = {}
        self.depth = 0

    def document(self) -> Item | None:
        try:
            self.next()  # StreamStartEvent
            if isinstance(self.peek(), yaml.StreamEndEvent):
                return None
            self.next()  # DocumentStartEvent
            item = self.value(self.next())
            self.next()  # DocumentEndEvent
            if not isinstance(self.next(), yaml.StreamEndEvent):
                raise _NeedsNodes
        finally:
            self.loader.dispose()
        for error in self.errors:
            self.collector.error(*error)
        return item

    def next(self) -> yaml.Event:
        event = self.loader.get_event()
        if getattr(event, "anchor", None) is not None or isinstance(event, yaml.AliasEvent):
            raise _NeedsNodes
        return event

    def peek(self) -> yaml.Event:
        return self.loader.peek_event()

    def span(self, start: yaml.Mark, end: yaml.Mark) -> Span:
        if end.line == start.line:
            length = end.column - start.column
        else:
            length = (self.line_lengths[start.line] if start.line < len(self.line_lengths) else 0) - start.column
        return Span(_pos(start, self.display), max(1, length))

    def value(self, event: yaml.Event) -> Item:
        if isinstance(event, yaml.ScalarEvent):
            span = self.span(event.start_mark, event.end_mark)
            return Item(self.scalar(event, span), span)
        start = event.start_mark
        self.enter(start)
        is_map = isinstance(event, yaml.MappingStartEvent)
        wrong_tag = event.tag not in (None, "!", _CORE + ("map" if is_map else "seq"))
        if wrong_tag:  # reported before what the collection holds, as the node-based builder does
            at = len(self.errors)
            self.errors.append(None)
        item = self.mapping(start) if is_map else self.sequence(start)
        if wrong_tag:
            self.errors[at] = (item.span, f"unsupported YAML tag {event.tag!r}")
        self.depth -= 1
        return item

    def enter(self, start: yaml.Mark) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise SourceError(Span(_pos(start, self.display), 1), f"the document nests deeper than {MAX_DEPTH} levels")

    def sequence(self, start: yaml.Mark) -> Item:
        values = []
        while not isinstance(event := self.next(), yaml.SequenceEndEvent):
            values.append(self.value(event))
        return Item(values, self.span(start, event.end_mark))

    def mapping(self, start: yaml.Mark) -> Item:
        values: dict[str, Item] = {}
        keys: dict[str, Item] = {}
        while not isinstance(key := self.next(), yaml.MappingEndEvent):
            if not isinstance(key, yaml.ScalarEvent):
                self.errors.append((self.skip(key), "mapping keys must be plain scalars (text or numbers)"))
                self.skip(self.next())
                continue
            if self.tag(key) == _MERGE:
                raise _NeedsNodes
            name = sys.intern(key.value)  # the same keys in every step: one string each
            span = self.span(key.start_mark, key.end_mark)
            if name in values:
                first = keys[name].pos
                self.errors.append((span, f"duplicate key '{name}' (first at line {first.line})"))
                self.skip(self.next())
                continue
            keys[name] = Item(name, span)
            values[name] = self.value(self.next())
        return Item(values, self.span(start, key.end_mark), keys)

    def skip(self, event: yaml.Event) -> Span:
        """Reads past a value that is not built (still within the depth limit); returns its span."""
        if isinstance(event, yaml.ScalarEvent):
            return self.span(event.start_mark, event.end_mark)
        self.enter(event.start_mark)
        while not isinstance(inner := self.next(), yaml.CollectionEndEvent):
            self.skip(inner)
        self.depth -= 1
        return self.span(event.start_mark, inner.end_mark)

    def tag(self, event: yaml.ScalarEvent) -> str:
        if event.tag is None or event.tag == "!":
            # PyYAML's resolver runs its regexes on every scalar; a suite repeats the same keys and values.
            key = (event.value, event.implicit)
            tag = self.resolved.get(key)
            if tag is None:
                tag = self.resolved[key] = self.loader.resolve(yaml.ScalarNode, event.value, event.implicit)
            return tag
        return event.tag

    def scalar(self, event: yaml.ScalarEvent, span: Span) -> Any:
        tag = self.tag(event)
        if tag not in _SCALAR_TAGS:
            self.errors.append((span, f"unsupported YAML tag {tag!r}"))
            return event.value
        if tag == _STR or tag == _TIMESTAMP:
            return event.value
        try:
            node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
            return self.constructor.construct_object(node)
        except (yaml.YAMLError, ValueError, KeyError):  # KeyError: `!!bool maybe`
            self.errors.append((span, f"{event.value!r} is not a valid {tag.rsplit(':', 1)[1]}"))
            return event.value
        finally:
            self.constructor.constructed_objects.clear()


class _Builder:
    """Turns composed nodes into Items, expanding aliases within a budget."""

    def __init__(self, display: str, text: str, collector: Collector, *, release: bool = False) -> None:
        self.display = display
        self.collector = collector
        self.line_lengths = _line_lengths(text)
        self.seen: set[int] = set()
        self.alias_nodes = 0
        self.active: set[int] = set()
        # Per file: a constructor remembers every node it constructed (a module-wide one kept them all).
        self.constructor = yaml.constructor.SafeConstructor()
        # Without aliases every node is built once: release each as soon as its Item exists, so the
        # composed nodes (about 350 bytes a value) and the Items do not all coexist.
        self.release = release

    def span(self, node: yaml.Node) -> Span:
        start, end = node.start_mark, node.end_mark
        pos = _pos(start, self.display)
        if end.line == start.line:
            length = end.column - start.column
        else:
            length = (self.line_lengths[start.line] if start.line < len(self.line_lengths) else 0) - start.column
        return Span(pos, max(1, length))

    def build(self, node: yaml.Node, expanding: bool = False) -> Item:
        if not self.release:  # released nodes are reached once: nothing to track
            if id(node) in self.seen:
                expanding = True  # this node was reached through an alias
            self.seen.add(id(node))
        if expanding:
            self.alias_nodes += 1
            if self.alias_nodes > MAX_ALIAS_NODES:
                raise SourceError(self.span(node), f"aliases expand to more than {MAX_ALIAS_NODES} values "
                                                   "(an alias bomb?); write the data out instead")
        if id(node) in self.active:
            raise SourceError(self.span(node), "an alias refers to a value that contains it (recursive alias)")
        if isinstance(node, yaml.ScalarNode):
            return Item(self.scalar(node), self.span(node))
        self.active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                self.check_tag(node, _CORE + "seq")
                return Item([self.build(child, expanding) for child in self.children(node)], self.span(node))
            self.check_tag(node, _CORE + "map")
            return self.mapping(node, expanding)
        finally:
            self.active.discard(id(node))

    def check_tag(self, node: yaml.Node, expected: str) -> None:
        if node.tag != expected:
            self.collector.error(self.span(node), f"unsupported YAML tag {node.tag!r}")

    def scalar(self, node: yaml.ScalarNode) -> Any:
        if node.tag not in _SCALAR_TAGS:
            self.collector.error(self.span(node), f"unsupported YAML tag {node.tag!r}")
            return node.value
        if node.tag.endswith(":timestamp"):
            return node.value
        try:
            value = self.constructor.construct_object(node)
            if self.release:
                del self.constructor.constructed_objects[node]
            return value
        except (yaml.YAMLError, ValueError, KeyError):  # KeyError: `!!bool maybe`
            self.collector.error(self.span(node), f"{node.value!r} is not a valid {node.tag.rsplit(':', 1)[1]}")
            return node.value

    def mapping(self, node: yaml.MappingNode, expanding: bool) -> Item:
        values: dict[str, Item] = {}
        keys: dict[str, Item] = {}
        merged: dict[str, tuple[Item, Item]] = {}
        span = self.span(node)
        for key_node, value_node in self.children(node):
            if key_node.tag == _MERGE:
                for source in self.merge_sources(value_node, expanding):
                    for name, value in source.value.items():
                        merged.setdefault(name, (source.keys[name], value))
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self.collector.error(self.span(key_node), "mapping keys must be plain scalars (text or numbers)")
                continue
            name = sys.intern(key_node.value)  # the same keys in every step: one string each
            if name in values:
                first = keys[name].pos
                self.collector.error(self.span(key_node), f"duplicate key '{name}' (first at line {first.line})")
                continue
            keys[name] = Item(name, self.span(key_node))
            values[name] = self.build(value_node, expanding)
        for name, (key, value) in merged.items():
            if name not in values:
                keys[name], values[name] = key, value
        return Item(values, span, keys)

    def children(self, node: yaml.CollectionNode) -> Iterator[Any]:
        """The node's children (pairs for a mapping); with `release`, each is dropped once yielded."""
        if not self.release:
            yield from node.value
            return
        pending, node.value = node.value, []
        pending.reverse()
        while pending:
            yield pending.pop()

    def merge_sources(self, node: yaml.Node, expanding: bool) -> list[Item]:
        nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
        items = [self.build(n, expanding) for n in nodes]
        for item in items:
            if not isinstance(item.value, dict):
                self.collector.error(item.span, "a '<<' merge key takes a mapping or a list of mappings")
        return [item for item in items if isinstance(item.value, dict)]
