"""The console's HTTP server (aiohttp): the application, its guard, and serving it.

:func:`make_app` builds the application around one :class:`Console` (the jobs source, the
live feed, the token); :func:`serve` binds 127.0.0.1 (a free port unless one is asked for),
prints the URL with its token and serves until interrupted.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional

from aiohttp import web

from sbatch_k8s.ui import access
from sbatch_k8s.ui.jobs_source import JobsSource
from sbatch_k8s.ui.live import JobFeed

HOST = "127.0.0.1"
STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
CONSOLE = web.AppKey("console", "Console")
#: Seconds open requests (live tables, followed logs) get to end when the console stops.
SHUTDOWN_S = 1.0

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Console:
    """What every handler shares."""

    source: JobsSource
    feed: JobFeed
    token: str
    port: int = 0


def console_of(request: web.Request) -> Console:
    """The console a request is served by."""
    return request.app[CONSOLE]


def json_response(data: Any, status: int = 200) -> web.Response:
    """A JSON answer (``ensure_ascii`` off: names and logs stay readable)."""
    return web.Response(text=json.dumps(data, ensure_ascii=False), status=status,
                        content_type="application/json")


def refused(status: int, message: str) -> web.Response:
    """A refusal the page (or a client) can show: ``{"error": message}``."""
    return json_response({"error": message}, status)


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Same user, right host, token (:mod:`.access`); the token URL sets the cookie."""
    console = console_of(request)
    server = (HOST, console.port)
    if not access.host_allowed(request.headers.get("Host"), console.port):
        return refused(403, "this console answers to its own address only")
    if not access.peer_is_owner(request.transport.get_extra_info("peername")
                                if request.transport else None, server):
        return refused(403, "this console serves the user who started it only")
    given = request.query.get(access.TOKEN_PARAMETER)
    if given is not None:
        if not access.same_token(given, console.token):
            return refused(403, "wrong token: use the URL sbatch-k8s ui printed")
        response = web.HTTPFound(request.rel_url.path)
        response.set_cookie(access.COOKIE, console.token, httponly=True, samesite="Strict",
                            path="/")
        return response
    if not access.same_token(request.cookies.get(access.COOKIE), console.token):
        return refused(403, "no token: open the URL sbatch-k8s ui printed")
    if request.method not in access.READING and not access.same_token(
            request.headers.get(access.HEADER), console.token):
        return refused(403, "a change needs the console's token in its request")
    return await handler(request)


@web.middleware
async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Errors as the commands word them, one line each: a bad filter or option in Slurm's
    words (400), what the backend could not do (502), anything else as an internal error
    (500, no traceback unless ``SBATCHK8S_DEBUG``)."""
    from parsers.input_errors import SlurmInputError
    from sbatch_k8s.operation_errors import SbatchK8sError

    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except SlurmInputError as e:
        return refused(400, e.render(request.get("command", "sbatch-k8s")).strip())
    except SbatchK8sError as e:
        return refused(502, f"sbatch-k8s: error: {e}")
    except (ConnectionResetError, asyncio.CancelledError):
        raise
    except Exception as e:  # the boundary: one line for the page and the terminal
        if os.environ.get("SBATCHK8S_DEBUG", "") not in ("", "0"):
            import traceback

            traceback.print_exc()
        message = f"sbatch-k8s: error: internal error: {type(e).__name__}: {e}"
        sys.stderr.write(message + "\n")
        return refused(500, message)


async def in_thread(function: Callable[..., Any], *args: Any) -> Any:
    """Run a blocking call (the backends', the files') in the worker pool."""
    return await asyncio.get_running_loop().run_in_executor(None, function, *args)


async def index(request: web.Request) -> web.Response:
    """The page, with the token its requests must carry."""
    with open(os.path.join(STATIC_DIR, "index.html"), encoding="utf-8") as f:
        page = f.read()
    return web.Response(text=page.replace("{{TOKEN}}", console_of(request).token),
                        content_type="text/html",
                        headers={"Cache-Control": "no-store",
                                 "Content-Security-Policy": "default-src 'self'; "
                                 "style-src 'self'; img-src 'self' data:"})


def make_app(source: JobsSource, interval_s: float, token: Optional[str] = None) -> web.Application:
    """The console's application (its feed starts with the server)."""
    from sbatch_k8s.ui import routes_job, routes_jobs

    app = web.Application(middlewares=[guard, errors], client_max_size=8 << 20)
    console = Console(source, JobFeed(source, interval_s), token or access.new_token())
    app[CONSOLE] = console
    app.router.add_get("/", index)
    app.router.add_static("/static/", STATIC_DIR, append_version=True)
    routes_jobs.add_routes(app)
    routes_job.add_routes(app)

    async def feed_task(app: web.Application) -> Any:
        task = asyncio.get_running_loop().create_task(console.feed.run())
        yield
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
    app.cleanup_ctx.append(feed_task)
    return app


def url_of(console: Console) -> str:
    """The URL the command prints (its token in it)."""
    return f"http://{HOST}:{console.port}/?{access.TOKEN_PARAMETER}={console.token}"


async def _serve(app: web.Application, port: int, ready: Callable[[str], None]) -> None:
    # open pages' streams never end by themselves: at Ctrl-C they are cut after this long
    runner = web.AppRunner(app, access_log=None, handle_signals=False,
                           shutdown_timeout=SHUTDOWN_S)
    await runner.setup()
    site = web.TCPSite(runner, HOST, port, reuse_address=False)
    await site.start()
    console = app[CONSOLE]
    sockets = [s for s in (site._server.sockets if site._server else [])]  # type: ignore
    console.port = sockets[0].getsockname()[1] if sockets else port
    ready(url_of(console))
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def serve(app: web.Application, port: int, ready: Callable[[str], None]) -> None:
    """Serve until interrupted (Ctrl-C, SIGTERM); ``ready(url)`` once listening."""
    import signal

    loop = asyncio.new_event_loop()
    main = loop.create_task(_serve(app, port, ready))
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, main.cancel)
    try:
        loop.run_until_complete(main)
    except asyncio.CancelledError:
        pass
    finally:
        # what is still running (open pages' streams) ends before the loop closes
        left = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.close()
        sys.stdout.flush()
