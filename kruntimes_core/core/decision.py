"""The value every decision returns (spec architecture: the one boundary)."""

from __future__ import annotations

from datetime import timedelta
from typing import Generic, TypeVar

from attrs import frozen

from kruntimes_core.core.actions import Action, Event

S_co = TypeVar("S_co", covariant=True)


@frozen
class Decision(Generic[S_co]):
    """Desired status, the actions to reach it, and when to look again.

    ``status`` is the status the object should have (None when the decider
    writes no status, e.g. runtimed). A status patch appears in ``actions``
    only when it differs from the observed one. ``requeue_after`` announces a
    time-driven change; ``message`` says why the decision waits, if it does.
    """

    status: S_co | None = None
    actions: tuple[Action, ...] = ()
    requeue_after: timedelta | None = None
    events: tuple[Event, ...] = ()
    message: str = ""
