"""The repository's own documents (docs/rules.md, docs/record.md) as pages to read: Markdown
rendered to HTML by markdown-it-py, inside a page of the site's style (static/css/app.css,
``.doc-page``)."""

from __future__ import annotations

import html
from functools import cache

from markdown_it import MarkdownIt

__all__ = ["render_document"]

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


def render_document(markdown: str, title: str) -> str:
    """A whole HTML page (str) of ``markdown`` (CommonMark with tables) titled ``title``; markup in
    the source is escaped, never passed through."""
    return _PAGE.format(title=html.escape(title), body=_markdown().render(markdown))
