"""The pbdlab module's tests run against the build tree: ctest sets PYTHONPATH to
<build>/python and PBDLAB_CLI to the pbdlab-cli built beside it."""

import os
import pathlib

import pytest


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("PBDLAB_CLI")
    if not path or not pathlib.Path(path).exists():
        pytest.fail("PBDLAB_CLI must name the pbdlab-cli of the same build (ctest sets it)")
    return path


@pytest.fixture(scope="session")
def source_dir():
    return pathlib.Path(os.environ.get("PBDLAB_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
