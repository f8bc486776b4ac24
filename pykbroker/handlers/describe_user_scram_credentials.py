"""DescribeUserScramCredentials (key 50), version 0.

The SCRAM mechanisms and iteration counts of users' credentials (never the credentials), as
Kafka 3.9's ZkAdminManager answers on any broker: with no users named (null or empty), every user
that has a SCRAM credential, sorted by name; otherwise each named user once, in request order.
The caller needs DESCRIBE on the cluster (Kafka's KafkaApis): otherwise the answer is
CLUSTER_AUTHORIZATION_FAILED, at the top and once per user asked for (without the user's name, as
Kafka's `getErrorResponse` answers), revealing nothing; a refused request for every user (null)
closes the connection, as on Kafka 3.9.0. Errors per user: RESOURCE_NOT_FOUND for an
empty name ("Username must not be empty") or a user without credentials ("Attempt to describe a user
credential that does not exist: <user>"), DUPLICATE_RESOURCE for a user named twice. Users are
stored as Kafka stores them (the metadata store's user configs, by sanitized name).
"""

from __future__ import annotations

import logging
from typing import Literal, overload

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse
from ..security.sanitizer import desanitize, sanitize
from .support.authorization import check
from .support.context import CloseConnection, RequestContext

API_KEY = ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS
MIN_VERSION = 0
MAX_VERSION = 0

Result = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
CredentialInfo = DescribeUserScramCredentialsResponse.CredentialInfo

log = logging.getLogger(__name__)
DESCRIBE_CLUSTER = check(API_KEY, "cluster")


async def handle(
    request: DescribeUserScramCredentialsRequest, ctx: RequestContext
) -> DescribeUserScramCredentialsResponse:
    if not DESCRIBE_CLUSTER.allows(ctx):
        return _refused(request, DESCRIBE_CLUSTER.denied)
    store = ctx.services.metadata
    users = [user.name for user in request.users or []]
    results: dict[str, Result] = {}
    if not users:
        for entity, configs in store.all_user_configs().items():
            result = _result(desanitize(entity), configs, explicit=False)
            if result is not None:
                results[desanitize(entity)] = result
        return DescribeUserScramCredentialsResponse(
            error_code=ErrorCode.NONE, results=[results[user] for user in sorted(results)]
        )
    duplicated = {user for user in users if users.count(user) > 1}
    for user in dict.fromkeys(users):
        if not user:
            results[user] = Result(
                user=user, error_code=ErrorCode.RESOURCE_NOT_FOUND, error_message="Username must not be empty"
            )
        elif user in duplicated:
            results[user] = Result(
                user=user,
                error_code=ErrorCode.DUPLICATE_RESOURCE,
                error_message=f"Cannot describe SCRAM credentials for the same user twice in a single request: {user}",
            )
        else:
            results[user] = _result(user, store.user_configs(sanitize(user)), explicit=True)
    return DescribeUserScramCredentialsResponse(
        error_code=ErrorCode.NONE, results=[results[user] for user in dict.fromkeys(users)]
    )


def _refused(request: DescribeUserScramCredentialsRequest, error: ErrorCode) -> DescribeUserScramCredentialsResponse:
    """Kafka's `DescribeUserScramCredentialsRequest.getErrorResponse` (no message: Kafka's ApiError
    leaves out the error's default message). Asking for every user (null) is not answered: Kafka's
    error response cannot be built for it, and Kafka 3.9.0 closes the connection."""
    if request.users is None:
        raise CloseConnection("a refused DescribeUserScramCredentials for every user (null users)")
    results = [Result(error_code=error, error_message=None) for _ in request.users or []]
    return DescribeUserScramCredentialsResponse(error_code=error, error_message=None, results=results)


@overload
def _result(user: str, configs: dict[str, str], *, explicit: Literal[True]) -> Result: ...
@overload
def _result(user: str, configs: dict[str, str], *, explicit: Literal[False]) -> Result | None: ...
def _result(user: str, configs: dict[str, str], *, explicit: bool) -> Result | None:
    """The user's result; a user without credentials is RESOURCE_NOT_FOUND when asked for by name
    (`explicit`), else left out (None)."""
    from ..security.sasl.scram import MECHANISMS, ScramCredential  # loaded on first use

    present = [mechanism for mechanism in MECHANISMS.values() if mechanism.mechanism_name in configs]
    if not present:
        if not explicit:
            return None
        return Result(
            user=user,
            error_code=ErrorCode.RESOURCE_NOT_FOUND,
            error_message=f"Attempt to describe a user credential that does not exist: {user}",
        )
    infos: list[CredentialInfo] = []
    for mechanism in sorted(present, key=lambda m: m.type_code):
        try:
            iterations = ScramCredential.from_config(configs[mechanism.mechanism_name]).iterations
        except ValueError:
            log.error("Error processing describe user SCRAM credential configs request: bad credential of %s", user)
            return Result(
                user=user,
                error_code=ErrorCode.UNKNOWN_SERVER_ERROR,
                error_message=ErrorCode.UNKNOWN_SERVER_ERROR.message,
            )
        infos.append(CredentialInfo(mechanism=mechanism.type_code, iterations=iterations))
    return Result(user=user, error_code=ErrorCode.NONE, credential_infos=infos)
