"""`xpath`: the nodes an XPath 1.0 expression selects in an HTML or XML body satisfy the predicate,
node by node, each failing node reported at its own path (`/html/body/ul/li[3]`).

lxml evaluates the expression. An element's value is its text (XPath's string-value, descendants'
text included), an attribute's is its value; an expression giving a number, string or boolean
(`count(//li)`, `string(//title)`, `boolean(//form)`) is that one value, at the expression.
XML is parsed without fetching or expanding external entities or DTDs.
"""

from litmus.assertions import predicates
from litmus.assertions._common import errored
from litmus.assertions.base import AssertionSpec, FieldSpec

SPEC = AssertionSpec(
    type="xpath",
    family="deterministic",
    doc="The nodes an XPath 1.0 expression selects in an HTML or XML body satisfy the predicate, node by node.",
    fields={
        "path": FieldSpec("xpath", "an XPath 1.0 expression, e.g. //ul/li or count(//li)", required=True),
        **predicates.fields("the node's text"),
        "document": FieldSpec("choice", "parse the body as html or xml (default: from Content-Type, then sniffed)",
                              choices=("html", "xml")),
        "namespaces": FieldSpec("mapping", "prefix -> namespace URI, for expressions like //a:item"),
    },
    exactly_one_of=(predicates.KEYS,),
)


class NotMarkup(ValueError):
    """The body cannot be parsed as HTML or XML, or the expression not evaluated on it (the message says why)."""


def evaluate(assertion, ctx):
    params = assertion.params
    expression = params["path"]
    try:
        selected = select(ctx.response, expression, params.get("document"), params.get("namespaces"))
    except NotMarkup as exc:
        return errored(assertion, str(exc))
    return predicates.evaluate(assertion, ctx, selected, where=expression, missing="no node matches",
                               text_values=True)


def select(response, expression: str, document: str | None = None,
           namespaces: dict[str, str] | None = None) -> list[tuple[str, object]]:
    """(path, value) of what `expression` selects in the body (the `xpath` assertion's and extraction's
    one reading); NotMarkup when the body cannot be parsed or the expression not evaluated on it."""
    from lxml import etree  # lazy: lxml: ~35 ms, only for a suite that uses XPath

    tree = parse(response, document)
    try:
        result = tree.xpath(expression, namespaces=namespaces or None)
    except etree.XPathError as exc:
        raise NotMarkup(f"XPath {expression} cannot be evaluated on this body: {exc}") from None
    return nodes(tree, expression, result)


def nodes(tree, expression: str, result) -> list[tuple[str, object]]:
    """(path, value) of each item of an XPath result; a scalar result is one value at the expression."""
    from lxml import etree  # lazy: lxml: ~35 ms, only for a suite that uses XPath

    if isinstance(result, bool):
        return [(expression, result)]
    if isinstance(result, float):
        return [(expression, int(result) if result.is_integer() else result)]
    if not isinstance(result, list):
        if getattr(result, "getparent", None) is None:
            return [(expression, str(result))]  # string(...), concat(...): a plain string
        result = [result]
    out = []
    for item in result:
        if isinstance(item, etree._Element):
            value = "".join(item.itertext()) if not isinstance(item, etree._Comment) else item.text or ""
            out.append((tree.getpath(item), value))
            continue
        parent = item.getparent() if hasattr(item, "getparent") else None
        if parent is None:
            out.append((expression, str(item)))
        elif getattr(item, "is_attribute", False):
            out.append((f"{tree.getpath(parent)}/@{item.attrname}", str(item)))
        else:
            out.append((f"{tree.getpath(parent)}/text()", str(item)))
    return out


def parse(response, document: str | None):
    """The body's element tree: HTML or XML as `document` says, else by Content-Type, else by its first bytes."""
    from lxml import etree, html  # lazy: lxml: ~35 ms, only for a suite that uses XPath

    kind = document or _kind(response.content_type, response.body)
    if not response.body.strip():
        raise NotMarkup(f"the body is empty, not {kind.upper()}")
    if kind == "html":
        try:
            return html.document_fromstring(response.body).getroottree()
        except (etree.ParserError, ValueError) as exc:
            raise NotMarkup(f"body is not HTML ({exc}): {response.describe_body()}") from None
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        return etree.fromstring(response.body, parser).getroottree()
    except etree.XMLSyntaxError as exc:
        raise NotMarkup(f"body is not XML ({exc}): {response.describe_body()}") from None


def _kind(content_type: str, body: bytes) -> str:
    media = content_type.split(";", 1)[0].strip().lower()
    if media == "text/html":
        return "html"
    if media.endswith("/xml") or media.endswith("+xml"):
        return "xml"
    head = body.lstrip()[:64].lower()
    return "xml" if head.startswith(b"<?xml") else "html"
