"""The parts of a problem spec that describe one value: a signature's parameter (its C type, role and element
type) and an input's distribution. grader/problems/spec.py builds the whole spec from them.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from grader.problems import dtypes, expr
from grader.tracks import cuda


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Param(_Strict):
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    type: str
    shape: list[str | int] | None = None

    @field_validator("type")
    @classmethod
    def _known_type(cls, value):
        if value in (f"{name}*" for name, tok in dtypes.ELEMENTS.items() if tok in dtypes.INPUT_ONLY):
            raise ValueError(
                f"type {value!r}: int8 and fp8 buffers are inputs only (const); no poison marks them unwritten"
            )
        if value != "int" and value not in dtypes.POINTER_TYPES:
            raise ValueError(f"type {value!r} is not int or one of {', '.join(dtypes.POINTER_TYPES)}")
        return value

    @property
    def role(self) -> str:
        return "size" if self.type == "int" else "input" if dtypes.is_input(self.type) else "output"

    @property
    def dtype(self) -> str:
        """The element type's request token: f32, f16, bf16, i32, i8 or e4m3 (grader/problems/dtypes.py)."""
        return "i32" if self.type == "int" else dtypes.token(self.type)

    def c_type(self, track: str = cuda.NAME) -> str:
        """The type a `track` submission declares (16-bit floats are uint16_t bits on the CPU track, fp8 uint8_t)."""
        return dtypes.c_type(self.type, track)

    @property
    def dims(self) -> list[str | int]:
        """The shape's formulas, one per dimension (none for a size parameter)."""
        return list(self.shape or [])

    @model_validator(mode="after")
    def _shape_matches_type(self):
        if self.type == "int" and self.shape is not None:
            raise ValueError(f"size parameter {self.name!r} takes no shape")
        if self.type != "int" and not self.shape:
            raise ValueError(f"pointer parameter {self.name!r} needs a shape")
        return self


class Distribution(_Strict):
    """Elements drawn uniformly from [low, high) by the counter-based generator in grader/run/inputs.py; a bound
    may be a formula of the sizes (labels in [0, "C"])."""

    low: float | str = -1.0
    high: float | str = 1.0

    @model_validator(mode="after")
    def _ordered(self):
        if isinstance(self.low, str) or isinstance(self.high, str):
            return self  # checked for every size set (Problem._check_formulas)
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            raise ValueError(f"low ({self.low}) and high ({self.high}) must be finite")
        if not self.high > self.low:
            raise ValueError(f"high ({self.high}) must be greater than low ({self.low})")
        return self

    def at(self, sizes: dict) -> tuple[float, float]:
        """(low, high) for these sizes."""
        return float(expr.evaluate(self.low, sizes)), float(expr.evaluate(self.high, sizes))
