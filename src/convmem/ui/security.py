"""Who may use the inspector, and what its pages may do in the browser.

The inspector shows everything a person said to their agent and can change what the
agent remembers, so it opens to nobody by default:

* **A token.** ``convmem ui`` makes a random token and prints it in the address. A
  request that carries it (``?token=…``) gets it back as a cookie (HttpOnly,
  SameSite=Strict, named after the port, since cookies do not tell ports apart);
  every other request must bring that cookie. Anything else is refused with 403.
* **The Host header** must name the address the server listens on, so a web page
  whose domain was re-pointed at 127.0.0.1 (DNS rebinding) gets 400, not the data.
* **Cross-site requests.** A change is a POST, and a POST must come from one of the
  inspector's own pages: the browser's ``Sec-Fetch-Site`` and ``Origin`` must say
  so, and the form must carry a value derived from the token (:func:`csrf_value`)
  that another site cannot know. The SameSite cookie already stops most of this;
  each check holds on its own.
* **What a page may do.** A strict Content Security Policy: scripts and styles only
  from the inspector's own ``/static/`` files (no inline script, no ``eval``), no
  frames, no forms posted elsewhere, no connections elsewhere. Stored text is
  escaped by the templates; this policy is the second wall if that ever slipped.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # same-origin, not no-referrer: under no-referrer a browser sends "Origin: null"
    # with the inspector's own form posts, and the Origin check could not tell them apart
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
SAFE_METHODS = frozenset({"GET", "HEAD"})
REFUSED = (
    "This inspector opens only with the address that <code>convmem ui</code> printed,"
    " token included. Copy that whole address into the browser."
)


def cookie_name(port: int) -> str:
    return f"convmem_ui_{port}"


def csrf_value(token: str) -> str:
    """The value every form carries: derived from the token, useless without it."""
    return hmac.new(token.encode(), b"convmem-ui-form", hashlib.sha256).hexdigest()[:40]


def same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode(), b.encode())


def _page(status: int, title: str, body: str) -> tuple[int, bytes]:
    html = (
        "<!doctype html><html lang=en><meta charset=utf-8>"
        f"<title>{title} · convmem</title>"
        '<link rel=stylesheet href="/static/app.css">'
        '<link rel=icon href="/static/favicon.svg" type="image/svg+xml">'
        f'<main class="refused"><h1>{title}</h1><p>{body}</p></main></html>'
    )
    return status, html.encode()


class Guard:
    """ASGI middleware: Host check, token or cookie, cross-site checks, headers."""

    def __init__(self, app: ASGIApp, token: str, hosts: set[str] | None, port: int) -> None:
        self.app = app
        self.token = token
        #: ``None`` when listening on every interface: any name may reach it then
        self.hosts = None if hosts is None else {h.lower() for h in hosts}
        self.port = port
        self.cookie = cookie_name(port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "").lower()
        refusal = self._refusal(scope, headers, host)
        set_cookie = self._wants_cookie(scope)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = list(HEADERS)
                took = (time.perf_counter() - started) * 1000
                extra.append((b"server-timing", f"app;dur={took:.1f}".encode()))
                if set_cookie:
                    extra.append(
                        (
                            b"set-cookie",
                            f"{self.cookie}={self.token}; Path=/; HttpOnly;"
                            " SameSite=Strict".encode(),
                        )
                    )
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        if refusal is not None:
            status, body = refusal
            await send_with_headers(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(b"content-type", b"text/html; charset=utf-8")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send_with_headers)

    def _wants_cookie(self, scope: Scope) -> bool:
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        return same(query.get("token"), self.token)

    def _refusal(
        self, scope: Scope, headers: dict[str, str], host: str
    ) -> tuple[int, bytes] | None:
        if self.hosts is not None and host not in self.hosts:
            return _page(
                400,
                "Unexpected address",
                "The inspector answers only at the address it printed.",
            )
        if scope["path"].startswith("/static/"):
            return None  # the stylesheet and scripts hold no data; the refusal page uses them
        if not (self._wants_cookie(scope) or same(self._cookie(headers), self.token)):
            return _page(403, "Token needed", REFUSED)
        if scope["method"] not in SAFE_METHODS:
            site = headers.get("sec-fetch-site")
            if site is not None and site != "same-origin":
                return _page(
                    403, "Refused", "Changes are accepted only from the inspector's pages."
                )
            origin = headers.get("origin")
            if origin is not None and origin.lower() != f"http://{host}":
                return _page(
                    403, "Refused", "Changes are accepted only from the inspector's pages."
                )
        return None

    def _cookie(self, headers: dict[str, str]) -> str | None:
        """The value of this inspector's cookie in the Cookie header (name=value; …)."""
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == self.cookie:
                return value.strip().strip('"')
        return None
