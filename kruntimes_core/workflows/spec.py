"""Workflow and WorkflowRun specifications (spec workflows.md section 1).

Field-level rules (syntax, enums, limits) are checked here, in the
constructors; rules that relate fields to each other (needs, cycles,
references) live in validation.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import ClassVar

from attrs import field, frozen

from kruntimes_core.artifacts.refs import relative_path_problem
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.core.names import label_value_problem
from kruntimes_core.core.validate import syntax
from kruntimes_core.core.wire import wire
from kruntimes_core.resources.runtime import API_VERSION

MAX_STEPS = 128


@frozen
class ArtifactSource:
    """A step's ``artifacts[]``: ``from: jobs.<job>.artifacts.<name>``, staged at ``path``."""

    from_: str = field(metadata=wire("from"))
    path: str = field(validator=syntax(relative_path_problem))


@frozen
class StepSpec:
    name: str = field(validator=syntax(label_value_problem))
    run: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(factory=dict)
    artifacts: tuple[ArtifactSource, ...] = ()


@frozen
class JobSpec:
    """Inline (``runs-on`` + ``steps``) or call (``uses`` + ``with``); validation.py
    checks that exactly one form is used."""

    runs_on: str = field(default="", metadata=wire("runs-on"))
    steps: tuple[StepSpec, ...] = ()
    needs: tuple[str, ...] = ()
    outputs: Mapping[str, str] = field(factory=dict)
    uses: str = ""
    with_: Mapping[str, str] = field(factory=dict, metadata=wire("with"))

    @property
    def is_call(self) -> bool:
        return bool(self.uses)


class InputType(StrEnum):
    STRING = "string"
    NUMBER = "number"
    BOOLEAN = "boolean"


@frozen
class WorkflowInput:
    type: InputType = InputType.STRING
    required: bool = False
    default: str | None = None
    description: str = ""


@frozen
class WorkflowOutput:
    value: str
    description: str = ""


@frozen
class WorkflowSpec:
    jobs: Mapping[str, JobSpec]
    inputs: Mapping[str, WorkflowInput] = field(factory=dict)
    outputs: Mapping[str, WorkflowOutput] = field(factory=dict)


@frozen
class Workflow:
    API_VERSION: ClassVar[str] = API_VERSION
    KIND: ClassVar[str] = "Workflow"

    metadata: ObjectMeta
    spec: WorkflowSpec


@frozen
class WorkflowRunSpec:
    jobs: Mapping[str, JobSpec]
    cancel_requested: bool = False
