"""ApiVersions (key 18), versions 0-4.

Lists every API and version range the broker fully handles (taken from the handler registry),
but those of a feature not finalized (the consumer group APIs without `group.version`, the share
group APIs without `share.version`).
v3 requests carry the client's software name and version; malformed ones get INVALID_REQUEST.
v3 and v4 answers also list the supported features and the finalized ones with their epoch
(`cluster/features.py`); v4 differs from v3 only in that a supported feature's lowest level may be
0 (KAFKA-17011: v3 readers refuse such a feature, so v3 answers leave those out).
A request above v4 is answered by the dispatcher with UNSUPPORTED_VERSION and a v0 body.
"""

import re

from ..cluster.features import (
    FINALIZED_FEATURES_EPOCH,
    disabled_api_keys,
    finalized_features,
    supported_features,
)
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import ApiVersionsRequest, ApiVersionsResponse
from .support.context import RequestContext

API_KEY = ApiKey.API_VERSIONS
MIN_VERSION = 0
MAX_VERSION = 4
LOWEST_LEVEL_ZERO_VERSION = 4  # the first version whose readers take a supported feature's minimum of 0

_SOFTWARE_NAME_OR_VERSION = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


async def handle(request: ApiVersionsRequest, ctx: RequestContext) -> ApiVersionsResponse:
    if ctx.api_version >= 3 and not _valid_client_software(request):
        return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST)
    disabled = disabled_api_keys(ctx.services.config)  # the APIs of features not finalized
    response = ApiVersionsResponse(
        error_code=ErrorCode.NONE,
        api_keys=[
            ApiVersionsResponse.ApiVersion(api_key=key, min_version=low, max_version=high)
            for key, low, high in ctx.services.api_versions
            if key not in disabled
        ],
    )
    if ctx.api_version >= 3:
        response.supported_features = [
            ApiVersionsResponse.SupportedFeatureKey(name=name, min_version=low, max_version=high)
            for name, (low, high) in supported_features().items()
            if low > 0 or ctx.api_version >= LOWEST_LEVEL_ZERO_VERSION
        ]
        finalized = finalized_features(ctx.services.config)
        response.finalized_features_epoch = FINALIZED_FEATURES_EPOCH
        response.finalized_features = [
            ApiVersionsResponse.FinalizedFeatureKey(name=name, max_version_level=level, min_version_level=level)
            for name, level in finalized.items()
        ]
    return response


def _valid_client_software(request: ApiVersionsRequest) -> bool:
    return all(
        _SOFTWARE_NAME_OR_VERSION.match(value or "")
        for value in (request.client_software_name, request.client_software_version)
    )
