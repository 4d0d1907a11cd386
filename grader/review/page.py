"""Render the review queue as one self-contained HTML file (no network: works from file:// and http).

The page's CSS and JavaScript (package data next to this module) are inlined; the queue is
embedded as JSON in a `<script type="application/json">` element with `<`, `>`, `&`, U+2028 and
U+2029 written as \\u escapes, so no answer text can close the element or open a comment
(`</script>`, `<!--`). The script builds the page with textContent only, never innerHTML, and a
Content-Security-Policy allows only the page's own inline script and style (by hash): even a
mistake in escaping could not run an answer as script.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from importlib import resources

_SLOT = re.compile(r"\{\{(TITLE|CSP|CSS|DATA|JS)\}\}")
_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def embed_json(data) -> str:
    """JSON that is inert inside a <script> element, whatever strings it holds."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in _ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def render(data: dict, title: str = "评分复核") -> str:
    css, js, shell = _asset("review.css"), _asset("review.js"), _asset("review.html")
    for name, text in (("review.css", css), ("review.js", js)):
        if "</" in text or "<!--" in text:
            raise ValueError(f"{name} must not contain '</' or '<!--': it is inlined into the page")
    csp = (f"default-src 'none'; script-src {_sha256(js)}; style-src {_sha256(css)}; img-src 'none'; "
           "connect-src 'none'; form-action 'none'; base-uri 'none'")
    values = {"TITLE": html.escape(title), "CSP": html.escape(csp, quote=True), "CSS": css, "DATA": embed_json(data),
              "JS": js}
    return _SLOT.sub(lambda m: values[m[1]], shell)   # one pass: a slot's value is never searched again
