"""ApiVersions (key 18), versions 0-3.

Lists every API and version range the broker fully handles (taken from the handler registry),
but those of a feature not finalized (the share group APIs without `share.version`).
v3 requests carry the client's software name and version; malformed ones get INVALID_REQUEST.
A request above v3 is answered by the dispatcher with UNSUPPORTED_VERSION and a v0 body.
"""

import re

from ..cluster.features import disabled_api_keys
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import ApiVersionsRequest, ApiVersionsResponse
from .support.context import RequestContext

API_KEY = ApiKey.API_VERSIONS
MIN_VERSION = 0
MAX_VERSION = 3

_SOFTWARE_NAME_OR_VERSION = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


async def handle(request: ApiVersionsRequest, ctx: RequestContext) -> ApiVersionsResponse:
    if ctx.api_version >= 3 and not _valid_client_software(request):
        return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST)
    disabled = disabled_api_keys(ctx.services.config)  # the APIs of features not finalized
    return ApiVersionsResponse(
        error_code=ErrorCode.NONE,
        api_keys=[
            ApiVersionsResponse.ApiVersion(api_key=key, min_version=low, max_version=high)
            for key, low, high in ctx.services.api_versions
            if key not in disabled
        ],
    )


def _valid_client_software(request: ApiVersionsRequest) -> bool:
    return all(
        _SOFTWARE_NAME_OR_VERSION.match(value or "")
        for value in (request.client_software_name, request.client_software_version)
    )
