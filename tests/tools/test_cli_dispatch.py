"""`pykbroker TOOL ...` runs a tool; `pykbroker --help` lists them; starting the broker is unchanged."""

from __future__ import annotations

import subprocess
import sys

from pykbroker import cli


def test_help_lists_every_tool():
    shown = subprocess.run([sys.executable, "-m", "pykbroker", "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0
    for tool in cli.TOOLS:
        assert f"  {tool} " in shown.stdout


def test_a_tool_runs_as_a_subcommand_and_its_usage_errors_exit_2():
    run = subprocess.run(
        [sys.executable, "-m", "pykbroker", "topics", "--list"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 2
    assert "--bootstrap-server" in run.stderr


def test_a_mistyped_tool_name_is_an_error_naming_the_closest_tool():
    run = subprocess.run(
        [sys.executable, "-m", "pykbroker", "topic", "--bootstrap-server", "127.0.0.1:1", "--list"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert run.stderr == "pykbroker: error: unknown tool 'topic'; did you mean 'topics'?\n"


def test_a_first_argument_that_is_a_file_or_far_from_every_tool_is_a_config_file(tmp_path, capsys):
    assert cli.mistyped_tool_message("consumer-group") == (
        "unknown tool 'consumer-group'; did you mean 'consumer-groups'?"
    )
    assert cli.mistyped_tool_message("server.properties") is None
    assert cli.mistyped_tool_message("nothing-like-a-tool") is None
    (tmp_path / "topic").write_text("")
    assert cli.mistyped_tool_message(str(tmp_path / "topic")) is None


def test_an_unreachable_cluster_is_exit_status_1_with_one_line(tmp_path):
    import socket

    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    settings = tmp_path / "fast.properties"
    settings.write_text("default.api.timeout.ms=1500\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pykbroker",
            "configs",
            "--bootstrap-server",
            f"127.0.0.1:{port}",
            "--describe",
            "--entity-type",
            "topics",
            "--entity-name",
            "t",
            "--command-config",
            str(settings),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1
    assert run.stderr == "Timed out after 1.5 s waiting for the cluster's answer\n"


def test_every_tool_module_has_a_main():
    import importlib

    for module in cli.TOOLS.values():
        assert callable(importlib.import_module(module).main)
