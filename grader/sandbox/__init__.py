"""Where untrusted code runs: one contract (base: Limits, Outcome, Sandbox, in_container) and two backends,
the local sandbox (local, with its layers: uids, cgroups, namespaces, minimal_root, workspace, watch, procfs) and the
container (docker_run, docker_engine), chosen by choice.choose. docs/container.md says what each layer is.
"""

from grader.sandbox.base import Limits, Outcome, Sandbox, in_container

__all__ = ["Limits", "Outcome", "Sandbox", "in_container"]
