"""The Kubernetes objects decisions read, as frozen, validated values.

Only the fields a decision reads or writes are modelled (spec workspaces.md
section 1); adapters drop every other field on the way in.
"""
