"""An authorizer the broker cannot honour stops it at start: one line, before any port or data."""
import pytest

from pykbroker.testkit.ports import free_port
from tests.test_startup import assert_one_line_without_traceback, start_pykbroker


@pytest.mark.parametrize("settings, refused", [
    ({"authorizer.class.name": "com.example.MyAuthorizer"},
     "authorizer.class.name=com.example.MyAuthorizer is not available in this broker"),
    ({"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"},
     "only kafka.security.authorizer.AclAuthorizer"),
])
def test_an_unknown_authorizer_stops_the_broker(tmp_path, settings, refused):
    settings = {"listeners": f"PLAINTEXT://127.0.0.1:{free_port()}", "log.dirs": str(tmp_path / "logs"), **settings}
    result = start_pykbroker(*[arg for key, value in settings.items() for arg in ("--override", f"{key}={value}")],
                             cwd=tmp_path)
    assert result.returncode == 2
    assert refused in assert_one_line_without_traceback(result.stderr)
    assert not (tmp_path / "logs").exists()
