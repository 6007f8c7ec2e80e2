"""Run affinity and anti-affinity (spec workspaces.md section 4).

The shape mirrors Kubernetes inter-pod affinity, applied to Runs placed on
Runtime Pods: required terms filter pods, preferred terms (weight 1..100)
score them. A term's topology key is ``kruntimes.io/runtime-pod`` (the same
Runtime Pod) or the name of a Runtime Pod label.
"""

from __future__ import annotations

from attrs import field, frozen

from kruntimes_core.core.errors import ValidationError
from kruntimes_core.core.names import qualified_name_problem
from kruntimes_core.core.selectors import LabelSelector
from kruntimes_core.core.validate import syntax
from kruntimes_core.core.wire import wire

RUNTIME_POD_TOPOLOGY = "kruntimes.io/runtime-pod"
MIN_WEIGHT, MAX_WEIGHT = 1, 100


@frozen
class RunAffinityTerm:
    """Runs matching ``label_selector``, counted per topology domain.

    A missing selector matches no Run (Kubernetes' nil selector).
    """

    topology_key: str = field(validator=syntax(qualified_name_problem))
    label_selector: LabelSelector | None = None


def _check_weight(_instance: object, _attribute: object, weight: int) -> None:
    if not MIN_WEIGHT <= weight <= MAX_WEIGHT:
        raise ValidationError(
            f"must be within {MIN_WEIGHT}..{MAX_WEIGHT} (got {weight})", ("weight",)
        )


@frozen
class WeightedRunAffinityTerm:
    weight: int = field(validator=_check_weight)
    run_affinity_term: RunAffinityTerm


@frozen
class RunAffinityRules:
    required: tuple[RunAffinityTerm, ...] = field(
        default=(), metadata=wire("requiredDuringSchedulingIgnoredDuringExecution")
    )
    preferred: tuple[WeightedRunAffinityTerm, ...] = field(
        default=(), metadata=wire("preferredDuringSchedulingIgnoredDuringExecution")
    )


@frozen
class Affinity:
    run_affinity: RunAffinityRules = RunAffinityRules()
    run_anti_affinity: RunAffinityRules = RunAffinityRules()
