"""Workflows and WorkflowRuns (spec workflows.md)."""
