"""How the autotuner's report (`Verdict.autotuned`, the submission's own: grader/run/autotuned.py) reads, as the
submission page and the terminal show it: the key each kernel was tuned for and the config it chose."""

from __future__ import annotations


def key_text(entry: dict) -> str:
    """'M=4096, N=2048, torch.float16': each key argument with its value, then what Triton appended (dtypes)."""
    named = [f"{name}={value}" for name, value in (entry.get("key") or {}).items()]
    return ", ".join(named + [str(value) for value in entry.get("extra") or []])


def config_text(entry: dict) -> str:
    """'BLOCK_M=128, BLOCK_N=256, num_warps=8, num_stages=4, num_ctas=1': the chosen config's kwargs, then how it
    launches (num_ctas and maxnreg where the report has them)."""
    config = entry.get("config") or {}
    chosen = [f"{name}={value}" for name, value in (config.get("kwargs") or {}).items()]
    launch = [
        f"{name}={config[name]}"
        for name in ("num_warps", "num_stages", "num_ctas", "maxnreg")
        if config.get(name) is not None
    ]
    return ", ".join(chosen + launch)
