"""Public test support: Hypothesis strategies, an in-memory world and state machines.

Importing this package needs Hypothesis (the ``testing`` extra); decision
modules never import it.
"""

from kruntimes_core.testing.workspace_machine import WorkspaceLifecycleMachine
from kruntimes_core.testing.workspace_world import World

__all__ = ["WorkspaceLifecycleMachine", "World"]
