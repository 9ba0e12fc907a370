"""Text to HTML for the site: Markdown with LaTeX math as MathML (no JavaScript), code highlighted by pygments."""

from __future__ import annotations

import html
import re
from xml.etree import ElementTree

from latex2mathml.converter import convert
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

LIGHT_STYLE, DARK_STYLE = "default", "github-dark"
_MATHML = "http://www.w3.org/1998/Math/MathML"
_UNDER_OVER = {
    f"{{{_MATHML}}}msub": f"{{{_MATHML}}}munder",
    f"{{{_MATHML}}}msup": f"{{{_MATHML}}}mover",
    f"{{{_MATHML}}}msubsup": f"{{{_MATHML}}}munderover",
}
_BIG_OPERATORS = {"\u2211", "\u220f", "\u22c3", "\u22c2", "max", "min", "lim", "sup", "inf"}
ElementTree.register_namespace("", _MATHML)


def code(source: str, language: str, line_numbers: bool = False) -> str:
    """`source` as a highlighted <pre> block (plain text where pygments does not know `language`)."""
    try:
        lexer = get_lexer_by_name(language or "text")
    except ClassNotFound:
        lexer = get_lexer_by_name("text")
    body = highlight(source, lexer, HtmlFormatter(nowrap=True))
    if line_numbers:  # pygments closes its spans at each line's end, so lines can be numbered one by one
        lines = body.splitlines()
        width = len(str(len(lines)))
        body = "".join(f'<span class="linenos">{n:>{width}}</span>{line}\n' for n, line in enumerate(lines, 1))
    return f'<pre class="highlight"><code>{body}</code></pre>'


def code_css() -> str:
    """pygments' token colours: a light style, and a dark one under prefers-color-scheme: dark."""
    light = HtmlFormatter(style=LIGHT_STYLE).get_style_defs(".highlight")
    dark = HtmlFormatter(style=DARK_STYLE).get_style_defs(".highlight")
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"


def math(latex: str, display: bool) -> str:
    """MathML for a LaTeX formula; the formula as code where latex2mathml cannot read it."""
    try:
        mathml = convert(latex, display="block" if display else "inline")
    except Exception:  # latex2mathml raises many kinds of errors on LaTeX it does not support
        return f'<code class="tex">{html.escape(latex)}</code>'
    return _limits_under_over(mathml) if display else mathml


def _limits_under_over(mathml: str) -> str:
    """Display style: the limits of sums, products, max and min go under and over the operator, as in TeX
    (latex2mathml writes them as sub- and superscripts, which browsers draw beside it)."""
    root = ElementTree.fromstring(mathml)
    for element in root.iter():
        base = element[0] if len(element) else None
        if (
            element.tag in _UNDER_OVER
            and base is not None
            and base.tag == f"{{{_MATHML}}}mo"
            and (base.text or "").strip() in _BIG_OPERATORS
        ):
            element.tag = _UNDER_OVER[element.tag]
    return ElementTree.tostring(root, encoding="unicode")


_markdown = (
    MarkdownIt("commonmark", {"highlight": lambda text, lang, _attrs: code(text, lang)})
    .enable("table")
    .use(
        dollarmath_plugin,
        double_inline=True,
        renderer=lambda latex, options: math(latex, options.get("display_mode", False)),
    )
)


def markdown(text: str) -> str:
    """Markdown with $inline$ and $$display$$ LaTeX to HTML."""
    html_text = _markdown.render(text)
    # Punctuation right after inline math stays on its line (MathML holds no <span>, so the first one closes it).
    return re.sub(r'(<span class="math inline">.*?</span>)([.,;:!?)]+)', r'<span class="nowrap">\1\2</span>', html_text)
