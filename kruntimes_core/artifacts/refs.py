"""ArtifactRef and Run artifact inputs (spec workspaces.md section 7).

A ref holds storage coordinates only, never credentials or contents.
"""

from __future__ import annotations

import posixpath
from datetime import datetime
from enum import StrEnum

from attrs import field, frozen

from kruntimes_core.core.errors import ValidationError
from kruntimes_core.core.validate import syntax

MAX_NAME_BYTES = 255
MAX_ARTIFACT_INPUTS = 32


class Driver(StrEnum):
    FILESYSTEM = "Filesystem"
    S3 = "S3"


class ArtifactType(StrEnum):
    FILE = "File"
    DIRECTORY = "Directory"
    ARCHIVE = "Archive"
    BLOB = "Blob"


def name_problem(name: str) -> str | None:
    """Why ``name`` is no artifact name: 1..255 UTF-8 bytes, no slashes, not . or .."""
    if not name or len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return f"must be 1..{MAX_NAME_BYTES} UTF-8 bytes"
    if "/" in name or "\\" in name:
        return "must not contain '/' or '\\'"
    if name in (".", ".."):
        return "must not be '.' or '..'"
    return None


def relative_path_problem(path: str) -> str | None:
    """Why ``path`` is no safe relative path: relative, normalised, no '..', not empty."""
    if not path:
        return "must not be empty"
    if path.startswith("/") or "\\" in path:
        return "must be a relative path"
    if ".." in path.split("/"):
        return "must not contain a '..' segment"
    if posixpath.normpath(path) != path:
        return f"must be normalised (as {posixpath.normpath(path)!r})"
    return None


@frozen
class FilesystemLocation:
    path: str = field(validator=syntax(relative_path_problem))
    volume_claim_name: str = ""


@frozen
class S3Location:
    bucket: str
    key: str


@frozen
class Location:
    filesystem: FilesystemLocation | None = None
    s3: S3Location | None = None


def _check_location(instance: ArtifactRef, _attribute: object, location: Location) -> None:
    given = [
        d
        for d, loc in ((Driver.FILESYSTEM, location.filesystem), (Driver.S3, location.s3))
        if loc is not None
    ]
    if given != [instance.driver]:
        raise ValidationError(
            f"must hold exactly one location, the one of driver {instance.driver.value}",
            ("location",),
        )


@frozen
class ArtifactRef:
    name: str = field(validator=syntax(name_problem))
    driver: Driver
    type: ArtifactType
    location: Location = field(validator=_check_location)
    size_bytes: int | None = None
    digest: str = ""
    content_type: str = ""
    created_at: datetime | None = None


@frozen
class ArtifactInput:
    """``Run.spec.artifactInputs[]``: stage ``ref`` at ``path`` under the Run directory."""

    ref: ArtifactRef
    path: str = field(validator=syntax(relative_path_problem))
