"""Vocabulary shared by every domain: metadata, conditions, actions, decisions."""
