"""Artifacts: immutable references to stored files (spec workspaces.md section 7)."""
