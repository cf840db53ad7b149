"""The repository's own documents (docs/rules.md, docs/record.md) as pages to read: Markdown
rendered to HTML by markdown-it-py, inside a page of the site's style (static/css/app.css,
``.doc-page``). A page is for players: the text a document keeps between ``<!-- developers -->``
and ``<!-- /developers -->`` (notes on the code and its tests) is left out of it; the Markdown
itself, served for tools and their authors, keeps it."""

from __future__ import annotations

import html
import re
from collections.abc import Collection
from functools import cache
from typing import Final

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = ["DEVELOPER_NOTES", "player_text", "render_document"]

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="dark">
<title>{title} · Domeng Online</title>
<link rel="icon" href="/static/img/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/css/app.css">
</head>
<body class="doc-page">
<nav class="doc-nav"><a href="/rules">← Rules</a> · <a href="/">Domeng Online</a></nav>
<main class="card doc">
{body}</main>
</body>
</html>
"""


@cache
def _markdown() -> MarkdownIt:
    # CommonMark with GitHub's tables; "html": False shows raw HTML in the source as text
    return MarkdownIt("commonmark", {"html": False}).enable("table")


DEVELOPER_NOTES: Final = re.compile(
    r"^<!-- developers -->\n.*?^<!-- /developers -->\n|<!-- developers -->.*?<!-- /developers -->",
    re.DOTALL | re.MULTILINE,
)
"""A note for developers in a document's Markdown with the comments around it: lines of their own
(the comments each alone on a line), or words within a line."""


def player_text(markdown: str) -> str:
    """``markdown`` without its notes for developers (`DEVELOPER_NOTES`).

    >>> player_text("## Glossary<!-- developers --> (use these words in code)<!-- /developers -->")
    '## Glossary'
    """
    return DEVELOPER_NOTES.sub("", markdown)


_SIBLING: Final = re.compile(r"(?P<name>[a-z][a-z0-9_-]*)\.md(?P<fragment>#[^\s]*)?")
"""A link to another document beside this one in docs/ (``record.md``, ``engine.md#views``)."""


def render_document(markdown: str, title: str, served: Collection[str] = ()) -> str:
    """A whole HTML page (str) of ``markdown`` (CommonMark with tables) titled ``title``, without
    its notes for developers (`player_text`); markup in the source is escaped, never passed
    through. A link to a sibling document (``record.md``) leads to its page (``/rules/record``)
    when its name is in ``served``; one the server does not serve (``engine.md``) is shown as its
    words alone, never as a link to a 404."""
    parser = _markdown()
    tokens = parser.parse(player_text(markdown))
    for block in tokens:
        if block.children:
            block.children = _sibling_links(block.children, served)
    body = parser.renderer.render(tokens, parser.options, {})
    return _PAGE.format(title=html.escape(title), body=body)


def _sibling_links(inline: list[Token], served: Collection[str]) -> list[Token]:
    """``inline`` with its links to sibling documents pointed at their pages, or unlinked."""
    kept: list[Token] = []
    dropping = False  # inside a link to a document not served (CommonMark links do not nest)
    for token in inline:
        if token.type == "link_open":
            sibling = _SIBLING.fullmatch(str(token.attrGet("href") or ""))
            if sibling and sibling["name"] in served:
                token.attrSet("href", f"/rules/{sibling['name']}{sibling['fragment'] or ''}")
            elif sibling:
                dropping = True
                continue
        elif token.type == "link_close" and dropping:
            dropping = False
            continue
        kept.append(token)
    return kept
