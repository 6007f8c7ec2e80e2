"""kruntimes_core: deterministic reconcilers for a Kubernetes-native execution platform.

Decisions live in the domain packages (``kruntimes_core.workspaces``, ...);
they take a snapshot and a time and return a Decision. Adapters
(``kruntimes_core.adapters``) read snapshots and apply actions.
"""

__version__ = "0.1.0"
