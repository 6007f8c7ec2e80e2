"""Kubernetes wire formats and, later, the cluster adapter."""
