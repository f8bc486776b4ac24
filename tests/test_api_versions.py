"""ApiVersions: what the broker advertises, and how it answers versions it does not know."""
import pytest

from pykbroker.handlers.support.registry import build_registry, default_modules
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.wire import WireClient

from .protocol.samples import sample

ApiVersions = messages.request(ApiKey.API_VERSIONS)
ADVERTISED = [(key, version) for key, entry in sorted(build_registry(default_modules()).items())
              for version in range(entry.min_version, entry.max_version + 1)]


@pytest.mark.parametrize("api_key,version", ADVERTISED)
def test_every_advertised_api_version_round_trips(api_key, version):
    for message in (messages.request(api_key), messages.response(api_key)):
        original = sample(message, version)
        encoded = message.encode_bytes(original, version=version)
        decoded, end = message.decode(encoded, version=version)
        assert end == len(encoded) and decoded == original


@pytest.mark.parametrize("version", range(0, 5))
def test_api_versions_lists_exactly_the_served_apis(broker, version):
    request = ApiVersions.cls(client_software_name="pykbroker-tests", client_software_version="1.0")
    with WireClient(broker.bootstrap) as client:
        response = client.request(ApiKey.API_VERSIONS, version, request)
    assert response.error_code == 0
    advertised = {(k.api_key, k.min_version, k.max_version) for k in response.api_keys}
    registry = build_registry(default_modules())
    # share groups (share.version) and consumer groups (group.version) are on by default
    assert advertised == {(key, e.min_version, e.max_version) for key, e in registry.items()}


def test_unsupported_api_versions_version_gets_error_35_and_a_v0_body_with_its_own_range(broker):
    """As from Kafka 3.9: only ApiVersions' own range, which the client retries within."""
    with WireClient(broker.bootstrap) as client:
        frame_version = 99
        client.correlation_id += 1
        # header v2 for a flexible version; body unknown to the broker
        client.send_raw(b"\x00\x00\x00\x0d" b"\x00\x12" + frame_version.to_bytes(2, "big") +
                        client.correlation_id.to_bytes(4, "big") + b"\x00\x01x\x00\x00")
        correlation_id, body = client.receive(ApiKey.API_VERSIONS, 0)
    assert correlation_id == client.correlation_id
    assert body.error_code == 35
    assert [(k.api_key, k.min_version, k.max_version) for k in body.api_keys] == [
        (ApiKey.API_VERSIONS, 0, 4)]


def test_invalid_client_software_name_gets_invalid_request(broker):
    request = ApiVersions.cls(client_software_name="-bad name-", client_software_version="1")
    with WireClient(broker.bootstrap) as client:
        assert client.request(ApiKey.API_VERSIONS, 3, request).error_code == 42
