"""The web judge's commands: `serve` (the web app and API; `--static` serves the rendered site as before),
`users` (add, import, list, admin, token), `verify` (a signed verdict, offline), and `submit_web`, what
`grader submit --remote URL` runs.

FastAPI, uvicorn, argon2 and cryptography are imported when a command runs, never when it is registered.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.text import Text

from grader import settings
from grader.cli import output
from grader.cli.results import DB, _database, serve_static


def serve(
    port: int = typer.Option(8000, "--port", metavar="PORT", help="Port to listen on (0: any free one)."),
    host: str = typer.Option("127.0.0.1", metavar="ADDRESS", help="Address to listen on (0.0.0.0: every one)."),
    db: str | None = DB,
    queue: str | None = typer.Option(
        None,
        metavar="[local|celery]",
        help="Who grades: local (the embedded worker, one job at a time) or celery (grader worker hosts); "
        "default $KERNELJUDGE_WEB_QUEUE, else local.",
    ),
    proxy_headers: bool = typer.Option(
        False, "--proxy-headers", help="Behind a TLS proxy: believe its X-Forwarded-Proto/-For (Secure cookies)."
    ),
    static: bool = typer.Option(False, "--static", help="Serve the rendered static site instead (no accounts)."),
    out: Path | None = typer.Option(
        None, "--out", metavar="FOLDER", show_default=False, help="With --static: render into this folder."
    ),
):
    """The web judge on http://ADDRESS:PORT/: problem pages, submitting, live status, verdicts, leaderboards and
    the HTTP API (/openapi.json), until interrupted."""
    if static:
        serve_static(port, db, out)
        return
    from grader.web import config as web_config
    from grader.web.server import serve as serve_web

    try:
        chosen = web_config.from_settings(db, queue)
    except ValueError as error:
        raise output.usage_error(str(error))
    if chosen.queue == "celery":
        from grader.cli.scale import _distributed

        _distributed()  # says so when the distributed extra is missing
    said = "the embedded worker grades" if chosen.queue == "local" else "Celery workers grade"
    with _database():
        try:
            serve_web(
                chosen,
                host,
                port,
                lambda url: output.console.print(f"serving {url} ({said}; Ctrl-C stops)", soft_wrap=True),
                output.warning,
                proxy_headers=proxy_headers,
            )
        except OSError as error:
            raise output.usage_error(f"cannot serve on {host}:{port}: {error}")


users_app = typer.Typer(help="The web judge's accounts.", no_args_is_help=True)


@users_app.command("add")
def users_add(
    name: str,
    admin: bool = typer.Option(False, "--admin", help="An admin: sees every submission, hides from leaderboards."),
    db: str | None = DB,
):
    """Add a user; the password is read from stdin (one line), else made and printed."""
    import secrets

    from grader.web import accounts

    given = "" if sys.stdin.isatty() else sys.stdin.readline().strip()
    password = given or secrets.token_urlsafe(12)
    with _database():
        try:
            accounts.create_user(name, password, is_admin=admin, db_url=db)
        except accounts.AccountError as error:
            raise output.usage_error(str(error))
    output.console.print(Text(f"added {name}" + ("" if given else f" with password {password}")))


@users_app.command("import")
def users_import(file: Path, db: str | None = DB):
    """Add the users of a CSV file of `name[,password]` lines (a course's list); made passwords are printed."""
    from grader.web import accounts

    if not file.is_file():
        raise output.usage_error(f"no such file: {file}")
    with _database():
        try:
            made = accounts.import_users(file, db)
        except accounts.AccountError as error:
            raise output.usage_error(f"{error} (the users before that line were added)")
    for name, password in made:
        output.console.print(Text(f"{name},{password}" if password else name))
    output.errors.print(f"added {len(made)} users")


@users_app.command("list")
def users_list(db: str | None = DB):
    """The users, admins marked."""
    from grader.web import accounts

    with _database():
        for user in accounts.list_users(db):
            output.console.print(Text(user.name + ("  (admin)" if user.is_admin else "")))


@users_app.command("admin")
def users_admin(
    name: str, revoke: bool = typer.Option(False, "--revoke", help="Make them a plain user."), db: str | None = DB
):
    """Make a user an admin (or, with --revoke, not)."""
    from grader.web import accounts

    with _database():
        try:
            accounts.set_admin(name, not revoke, db)
        except accounts.AccountError as error:
            raise output.usage_error(str(error))


@users_app.command("token")
def users_token(name: str, label: str = typer.Option("cli", "--label", metavar="LABEL"), db: str | None = DB):
    """Make an API token for a user and print it (shown this once)."""
    from grader.web import accounts

    with _database():
        user = accounts.user_named(name, db)
        if user is None:
            raise output.usage_error(f"no user {name!r}")
        output.console.print(accounts.create_token(user, label, db), soft_wrap=True)


def verify(
    file: Path = typer.Argument(..., help="A signed verdict (the API's /api/v1/submissions/ID/signed)."),
    key: Path | None = typer.Option(
        None,
        "--key",
        metavar="PEM",
        help="The judge's public key (its /api/v1/signing-key); default: this host's judge key.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the verified verdict as JSON."),
):
    """Check a signed verdict offline against the judge's public key: exit 0 if it is intact, 1 if not."""
    from grader.web import signing

    try:
        document = json.loads(file.read_text())
    except (OSError, ValueError) as error:
        raise output.usage_error(f"cannot read {file}: {error}")
    key_file = key or signing.key_path()
    try:
        public = signing.load_public_key(_pem(key_file.read_bytes()))
    except (OSError, ValueError) as error:
        raise output.usage_error(f"cannot read the public key {key_file}: {error}")
    try:
        verdict = signing.verify(document, public)
    except signing.BadSignature as error:
        output.errors.print(Text(f"NOT VERIFIED: {file}: {error}", style="red"))
        raise typer.Exit(1)
    if as_json:
        output.print_json(verdict)
        return
    attestation = document["attestation"]
    output.console.print(
        Text(
            f"verified: {verdict['submission_id']} {verdict['status']} ({verdict['problem']}, {verdict['track']}"
            f" track) by {verdict['user'] or '?'}, signed by key {document['signature']['key_id']} of "
            f"{attestation.get('judge')} at {attestation.get('signed_at')}; source sha256 "
            f"{attestation['source_sha256']}, grader {attestation['grader_build']}"
        )
    )


def _pem(raw: bytes) -> bytes:
    """A key file's PEM: the file itself, or the public_key_pem of the API's JSON answer saved to a file."""
    if raw.lstrip().startswith(b"{"):
        return str(json.loads(raw).get("public_key_pem", "")).encode()
    return raw


def submit_web(
    url: str,
    token: str | None,
    problem: str,
    file: Path,
    track: str | None,
    mode: str,
    as_json: bool,
    signed_out: Path | None = None,
) -> int:
    """`grader submit --remote URL`: submit FILE through the API, wait and print its verdict; the exit code."""
    from grader.judge.intake import SourceError, read_source
    from grader.verdict.model import Verdict
    from grader.web import remote

    try:
        source = read_source(file)
    except SourceError as error:
        raise output.usage_error(str(error))
    except OSError as error:
        raise output.usage_error(f"cannot read {file}: {error.strerror}")
    token = token or settings.TOKEN.get() or None
    say = (lambda _: None) if as_json else (lambda text: output.errors.print(Text(text, style="dim")))
    try:
        job = remote.submit(url, token, problem, source, file.name, track, mode, waiting=say)
        say(f"job {job['job_id']} on {url}: {job['state']}")
        verdict = remote.wait_for_verdict(url, token, job["job_id"], timeout_s=None, progress=say)
        if signed_out is not None and verdict is not None:
            signed_out.write_text(json.dumps(remote.signed(url, token, job["job_id"]), indent=2))
    except remote.RemoteError as error:
        raise output.usage_error(str(error))
    assert verdict is not None
    if as_json:
        output.print_json(verdict)
    else:
        output.print_verdict(Verdict.from_json(verdict))
    return 0 if verdict.get("status") == "accepted" else 1


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("verify")(verify)
    app.add_typer(users_app, name="users")
