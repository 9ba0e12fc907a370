"""SpecError: what a problem folder that cannot be used raises (spec.py and reference_file.py)."""


class SpecError(Exception):
    """A problem spec that cannot be used; the message names the file and the field."""
