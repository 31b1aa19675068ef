"""Shared fixtures of the trackgen Python tests: the repository root, the CLI binary, the
racing environment example on the import path."""

import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "examples" / "python"))


def require(name):
    """Skip a test whose tool is missing, unless CI asks for it (TRACKGEN_REQUIRE_<NAME>=1)."""
    message = f"{name} not available"
    if os.environ.get(f"TRACKGEN_REQUIRE_{name.upper()}") == "1":
        pytest.fail(message + f" (TRACKGEN_REQUIRE_{name.upper()}=1)")
    pytest.skip(message)


@pytest.fixture(scope="session")
def cli():
    """The trackgen binary built by `cargo test` / `cargo build` (debug or release)."""
    for profile in ("debug", "release"):
        path = ROOT / "target" / profile / "trackgen"
        if path.exists():
            return path
    require("cli")
