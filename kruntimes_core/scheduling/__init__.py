"""Placing Pending Runs on Runtime Pods (spec workspaces.md section 4)."""
