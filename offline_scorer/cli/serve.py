"""`offline-scorer serve`: the judge behind an OpenAI-compatible endpoint (`offline_scorer.serve`).

Binds loopback by default. Any other address needs `--api-key` (or an explicit `--insecure`),
because the endpoint runs a model on this machine for whoever reaches it.
"""

from __future__ import annotations

import ipaddress
import os
import signal
from typing import Any

import click

from offline_scorer.cli.options import judge_options, judge_settings
from offline_scorer.errors import InputError

API_KEY_ENV = "OFFLINE_SCORER_API_KEY"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command("serve")
@judge_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True)
@click.option(
    "--api-key",
    default=None,
    envvar=API_KEY_ENV,
    help=f"Bearer token every request must carry (default: ${API_KEY_ENV}).",
)
@click.option("--insecure", is_flag=True, help="Allow a non-loopback --host without an API key.")
@click.option("--access-log", is_flag=True, help="Log every request to standard error.")
def serve_command(
    host: str, port: int, api_key: str | None, insecure: bool, access_log: bool, **judge: Any
) -> None:
    """Serve the judge as OpenAI's /v1/chat/completions (and /v1/models) over HTTP.

    Record modes as for `score`, default auto: answers in the cassette are replayed (replay
    needs no model runtime), others run on the model and are recorded. See docs/serve.md.
    """
    if not _loopback(host) and not api_key and not insecure:
        raise InputError(
            f"--host {host} is not a loopback address: give --api-key TOKEN (or "
            f"${API_KEY_ENV}), or --insecure to serve without one"
        )
    if judge.get("record_mode") is None and not os.environ.get("OFFLINE_SCORER_RECORD_MODE"):
        judge["record_mode"] = "auto"
    try:
        import uvicorn

        from offline_scorer.serve.app import create_app
        from offline_scorer.serve.run import open_service
    except ImportError as error:
        raise InputError(
            f"serve needs the 'serve' extra ({error.name} is missing): run scripts/setup or "
            "pip install 'offline-scorer[serve]'"
        ) from None
    settings = judge_settings(**judge)
    service = open_service(settings)
    app = create_app(service, api_key=api_key)
    click.echo(
        f"offline-scorer serve: http://{host}:{port}/v1 model {service.spec.name!r}, "
        f"record mode {service.mode.value}, cassette {service.cassette_path or 'none'}",
        err=True,
    )
    stopped_by: list[int] = []
    # uvicorn shuts down gracefully on SIGTERM/SIGINT, then raises the signal again for the
    # handler that was there before it: these record it instead of dying (or a traceback).
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda number, frame: stopped_by.append(number))
    uvicorn.run(
        app,
        host=host,
        port=port,
        access_log=access_log,
        log_level="info" if access_log else "warning",
        timeout_graceful_shutdown=5,
    )
    if signal.SIGINT in stopped_by:
        raise SystemExit(130)
