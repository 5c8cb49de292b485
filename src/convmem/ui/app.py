"""The inspector's web application: templates, request helpers, errors, routes.

One :class:`Inspector` holds the runtime (store and settings) and the template
environment; the page modules add their routes to it. Pages are ``async`` but call
the library directly, on the event loop: the inspector serves one person, a page
takes milliseconds, and one store connection used from one thread is what both
backends are built for.

Templates escape everything (``autoescape``); no template marks stored text safe.
Bad input (a page number that is not a number, an unknown session) is a page with
one sentence and a 400 or 404; anything unexpected is a 500 page with one sentence,
and the traceback goes to ``convmem.log`` in the data dir, as with the CLI.
"""

from __future__ import annotations

import traceback
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from convmem.errors import ConvmemError, NotFoundError, StoreError
from convmem.ui import display as fmt
from convmem.ui.security import Guard, csrf_value, same

if TYPE_CHECKING:
    from convmem.runtime import MemoryRuntime
    from convmem.ui.security import ASGIApp

#: Rows per page of every list.
PAGE_SIZE = 50

Endpoint = Callable[[Request], Awaitable[Response]]


class UserError(Exception):
    """A request the inspector cannot serve, with the sentence that says why."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def url(path: str, **params: Any) -> str:
    """``path`` with the given query parameters (None and '' left out), encoded."""
    pairs: list[tuple[str, str]] = []
    for key, value in params.items():
        if value is None or value == "":
            continue
        if isinstance(value, list | tuple):
            pairs += [(key, str(v)) for v in value]
        else:
            pairs.append((key, str(value)))
    return path + ("?" + urlencode(pairs) if pairs else "")


class Inspector:
    """The runtime, the templates and the helpers every page uses."""

    def __init__(self, runtime: MemoryRuntime, token: str) -> None:
        self.runtime = runtime
        self.store = runtime.store
        self.settings = runtime.settings
        self.csrf = csrf_value(token)
        self.routes: list[BaseRoute] = []
        self.env = Environment(
            loader=PackageLoader("convmem.ui", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,  # packaged templates: no stat() per page
        )
        self.env.globals.update(
            url=url,
            csrf=self.csrf,
            backend=self.store.backend,
            fmt=fmt,
        )
        self.env.filters.update(
            when=fmt.when, clip=fmt.clip, tail=fmt.tail, pct=fmt.pct, num=fmt.num, score=fmt.score
        )
        # the macros are a global, so a fragment rendered alone (for htmx) has them too
        self.env.globals["m"] = self.env.get_template("_macros.html").module

    # --- responses --------------------------------------------------------------------

    def render(
        self, request: Request, template: str, status: int = 200, **context: Any
    ) -> HTMLResponse:
        """A page, or only its ``fragment`` block when htmx asks for part of one."""
        tmpl = self.env.get_template(template)
        context.setdefault("session", None)
        context["request_path"] = request.url.path
        fragment = request.headers.get("hx-target")
        if fragment and fragment in tmpl.blocks and request.headers.get("hx-request"):
            ctx = tmpl.new_context(context)
            html = "".join(tmpl.blocks[fragment](ctx))
        else:
            html = tmpl.render(context)
        return HTMLResponse(html, status_code=status)

    def error_page(self, request: Request, status: int, message: str) -> HTMLResponse:
        titles = {
            400: "Cannot show that",
            403: "Refused",
            404: "Not found",
            503: "Store unavailable",
        }
        return self.render(
            request,
            "error.html",
            status=status,
            title=titles.get(status, "Something went wrong"),
            message=message,
        )

    def route(
        self, path: str, methods: tuple[str, ...] = ("GET",)
    ) -> Callable[[Endpoint], Endpoint]:
        """Register a page. Its errors become pages: a user's mistake or a library
        error with its own sentence, anything else a 500 with the traceback logged."""

        def register(func: Endpoint) -> Endpoint:
            async def endpoint(request: Request) -> Response:
                try:
                    return await func(request)
                except UserError as exc:
                    return self.error_page(request, exc.status, str(exc))
                except NotFoundError as exc:
                    return self.error_page(request, 404, str(exc))
                except StoreError as exc:
                    return self.error_page(request, 503, str(exc))
                except ConvmemError as exc:
                    return self.error_page(request, 400, str(exc))
                except Exception as exc:
                    where = _log_traceback(self)
                    return self.error_page(
                        request,
                        500,
                        f"internal error ({type(exc).__name__}); details were written to {where}",
                    )

            self.routes.append(Route(path, endpoint, methods=list(methods)))
            return func

        return register

    # --- request helpers -----------------------------------------------------------------

    @staticmethod
    def int_param(
        request: Request, name: str, default: int | None = None, low: int = -(2**62)
    ) -> int | None:
        raw = request.query_params.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            raise UserError(f"“{name}” must be a whole number, not {raw[:40]!r}.") from None
        if not low <= value < 2**62:
            raise UserError(f"“{name}” is out of range.")
        return value

    @staticmethod
    def choice_params(request: Request, name: str, allowed: Iterable[str]) -> list[str]:
        """Repeated ``name`` parameters, each one of ``allowed`` (blank ones ignored)."""
        allowed = tuple(allowed)
        values = [v for v in request.query_params.getlist(name) if v]
        for value in values:
            if value not in allowed:
                raise UserError(
                    f"“{name}” must be one of {', '.join(allowed)}, not {value[:40]!r}."
                )
        return list(dict.fromkeys(values))

    def session_param(self, request: Request, name: str = "s") -> dict[str, Any]:
        """The session named by ``?s=``, summarised, or a 404."""
        session_id = request.query_params.get(name, "")
        if not session_id:
            raise UserError("Which session? The address needs “s=” with a session id.")
        summary = self.store.session_summary(session_id)
        if summary is None:
            raise UserError(f"There is no session {session_id[:80]!r}.", 404)
        return summary

    async def checked_form(self, request: Request) -> Mapping[str, str]:
        """The posted form, once its token-derived value proves it came from a page here."""
        form = await request.form()
        values = {k: v for k, v in form.items() if isinstance(v, str)}
        if not same(values.get("csrf"), self.csrf):
            raise UserError("This form is stale or did not come from the inspector.", 403)
        return values


def _log_traceback(inspector: Inspector) -> str:
    try:
        from convmem.core.paths import append_private

        folder = inspector.settings.data_dir
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        log = folder / "convmem.log"
        append_private(log, traceback.format_exc() + "\n")
        return str(log)
    except Exception:
        return "(no log could be written)"


def create_app(runtime: MemoryRuntime, token: str, hosts: set[str] | None, port: int) -> ASGIApp:
    """The whole inspector as one ASGI application, guarded (see :mod:`.security`)."""
    from convmem.ui import pages_blocks, pages_memory, pages_more, pages_sessions

    inspector = Inspector(runtime, token)
    for module in (pages_sessions, pages_memory, pages_blocks, pages_more):
        module.register(inspector)
    routes: list[BaseRoute] = [
        *inspector.routes,
        Mount("/static", StaticFiles(packages=[("convmem.ui", "static")])),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return inspector.error_page(request, 404, "The inspector has no such page.")
        if exc.status_code == 405:
            return inspector.error_page(request, 405, "That page cannot be asked for this way.")
        return inspector.error_page(request, exc.status_code, str(exc.detail))

    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    return Guard(app, token, hosts, port)
