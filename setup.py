"""Packaging: setuptools reads everything from pyproject.toml; this file only adds one build step.

The protocol schemas live in the top-level `protocol/messages/` (the source of truth, extracted
from Kafka's definitions by `protocol/extract.py`). Building a wheel copies them into the package
as `pykbroker/protocol/schemas/`, so an installed broker carries its own copy; a checkout and an
editable install read the top-level folder (see `pykbroker.protocol.schema.find_schema_dir`).
"""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SCHEMA_SOURCE = Path(__file__).parent / "protocol" / "messages"


class BuildPyWithSchemas(build_py):
    """build_py, plus a copy of the protocol schemas into the built package."""

    def run(self):
        super().run()
        if self.editable_mode:
            return  # an editable install reads protocol/messages/ in place
        target = Path(self.build_lib) / "pykbroker" / "protocol" / "schemas"
        target.mkdir(parents=True, exist_ok=True)
        for schema in sorted(SCHEMA_SOURCE.glob("*.json")):
            shutil.copyfile(schema, target / schema.name)


setup(cmdclass={"build_py": BuildPyWithSchemas})
