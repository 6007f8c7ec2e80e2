"""PersistentWorkspace lifecycle: binding, usage, cleanup (spec workspaces.md 2-3)."""
