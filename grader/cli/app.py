"""The typer app every `grader` command is registered on, with the conventions they all share.

- Help that reads like a man page: `grader submit [OPTIONS] PROBLEM [FILE]`, flags without a type (`--json`,
  not `--json <bool>`), options with a named value (`--user NAME`), arguments without `<str>`.
- A usage error found while parsing (a missing argument, an unknown option) is also a JSON object on stdout
  when --json was given, as the commands' own usage errors are (output.usage_error).
- `grader --version`, and shell completion (`--install-completion`, `--show-completion`) from typer.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

import grader
from grader import interrupts
from grader.cli import output

try:  # recent typer carries its own copy of click, and parses and raises with that one
    from typer._click.exceptions import UsageError
except ImportError:  # typer before the copy
    from click import UsageError  # type: ignore[assignment]


class _Argument(TyperArgument):
    """An argument shown by its name alone: PROBLEM when required, [FILE] when not."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def get_usage_pieces(self, ctx: Any) -> list[str]:
        name = self.metavar or (self.name or "").upper()
        name += "..." if self.nargs != 1 else ""
        return [name if self.required else f"[{name}]"]


def _readable(params: list, ctx: Any) -> list:
    """The parameters with the metavars the help shows: none for a flag, TEXT/INTEGER/... for a value."""
    for param in params:
        if isinstance(param, TyperArgument):
            param.__class__ = _Argument  # only display methods differ; typer offers no hook for them
            param.metavar = param.metavar or (param.name or "").upper()
        elif isinstance(param, TyperOption) and param.metavar is None:
            if param.is_flag or param.count:
                param.metavar = ""
            else:
                param.metavar = _type_name(param, ctx)
    return params


class Group(TyperGroup):
    """`grader` itself: its options (--version, --install-completion) shown as flags, not `<bool>`."""

    def get_params(self, ctx: Any) -> list:
        return _readable(super().get_params(ctx), ctx)


class Command(TyperCommand):
    """A command with readable metavars whose parse errors also answer in JSON under --json."""

    def get_params(self, ctx: Any) -> list:
        return _readable(super().get_params(ctx), ctx)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        wants_json = "--json" in args  # before parsing, which consumes `args`
        try:
            return super().parse_args(ctx, args)
        except UsageError as error:
            if wants_json:
                output.print_json({"status": "usage_error", "message": error.format_message()})
            raise


def _type_name(param: Any, ctx: Any) -> str:
    """TEXT, INTEGER, PATH...: the metavar of an option that was given none."""
    display = getattr(param, "display_type", None)  # typer's own parameters; before it, click's `type`
    name = display(ctx).strip("<>") if display else param.type.name
    return {"str": "TEXT", "int": "INTEGER"}.get(name, name).upper()


class App(typer.Typer):
    """typer.Typer whose commands are `Command`s."""

    def command(self, *args: Any, cls: type[TyperCommand] | None = None, **kwargs: Any):
        return super().command(*args, cls=cls or Command, **kwargs)


def _version(value: bool) -> None:
    if value:
        from grader import identity

        output.console.print(f"kerneljudge {grader.__version__} (build {identity.grader_build()})")
        raise typer.Exit()


def make_app() -> App:
    app = App(
        cls=Group,
        help="kerneljudge: an online judge for GPU kernels (and a CPU track in C++/OpenMP).",
        no_args_is_help=True,
        rich_markup_mode="rich",
    )

    @app.callback()
    def _main(
        version: bool = typer.Option(
            False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ) -> None:
        """kerneljudge: an online judge for GPU kernels (and a CPU track in C++/OpenMP)."""
        interrupts.install()  # SIGTERM ends a command as Ctrl-C does, so every cleanup runs

    return app
