"""kerneljudge's trusted side: specs, compile, sandbox, check, verdicts, CLI."""

__version__ = "0.1.0"
