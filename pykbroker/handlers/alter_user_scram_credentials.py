"""AlterUserScramCredentials (key 51), version 0.

Creates, replaces and deletes users' SCRAM credentials as Kafka 3.9's ZkAdminManager does. The
client sends the salt and the salted password (never the password); the broker keeps Kafka's
credential (`salt=...,stored_key=...,server_key=...,iterations=N`) under the mechanism's name in
the user's configs: `/config/users/<sanitized user>` plus a `/config/changes` notification in a
cluster (so that every broker authenticates the user at once), the embedded store on one broker.

In a cluster only the controller alters credentials (NOT_CONTROLLER for every user elsewhere; the
admin clients send it to the controller). Then, as Kafka's KafkaApis, the caller needs ALTER on the
cluster: CLUSTER_AUTHORIZATION_FAILED for every user otherwise, nothing altered. Such whole-request
errors list each user once, sorted by name, without a message. Errors per user, with Kafka's messages:
UNACCEPTABLE_CREDENTIAL for an empty name ("Username must not be empty"),
UNSUPPORTED_SASL_MECHANISM for an unknown mechanism, UNACCEPTABLE_CREDENTIAL for fewer than 4096
or more than 16384 iterations, DUPLICATE_RESOURCE for a (user, mechanism) altered twice,
RESOURCE_NOT_FOUND for deleting a credential that does not exist. A user with any error is not
altered at all.
"""

from __future__ import annotations

import logging

from ..cluster.store import MetadataStore
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse
from ..security.sanitizer import sanitize
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.ALTER_USER_SCRAM_CREDENTIALS
MIN_VERSION = 0
MAX_VERSION = 0

Result = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult
Upsertion = AlterUserScramCredentialsRequest.ScramCredentialUpsertion
Deletion = AlterUserScramCredentialsRequest.ScramCredentialDeletion

log = logging.getLogger(__name__)
ALTER_CLUSTER = check(API_KEY, "cluster")

EMPTY_USER = "Username must not be empty"
UNKNOWN_MECHANISM = "Unknown SCRAM mechanism"


async def handle(request: AlterUserScramCredentialsRequest, ctx: RequestContext) -> AlterUserScramCredentialsResponse:
    store = ctx.services.metadata
    in_cluster = bool(ctx.services.config.get("zookeeper.connect"))
    if in_cluster and store.controller_id != ctx.services.broker_id:
        return _refused(request, ErrorCode.NOT_CONTROLLER)
    if not ALTER_CLUSTER.allows(ctx):
        return _refused(request, ALTER_CLUSTER.denied)
    results = _alter(request.upsertions, request.deletions, store)
    await store.wait_durable()
    return AlterUserScramCredentialsResponse(results=results)


def _refused(request: AlterUserScramCredentialsRequest, error: ErrorCode) -> AlterUserScramCredentialsResponse:
    """Kafka's `AlterUserScramCredentialsRequest.getErrorResponse`: every user once, sorted, without
    a message (Kafka's ApiError leaves out the error's default message)."""
    users = sorted({d.name for d in request.deletions} | {u.name for u in request.upsertions})
    return AlterUserScramCredentialsResponse(
        results=[Result(user=user, error_code=error, error_message=None) for user in users]
    )


def _alter(upsertions: list[Upsertion], deletions: list[Deletion], store: MetadataStore) -> list[Result]:
    from ..security.sasl.scram import MAX_ITERATIONS, MECHANISMS_BY_TYPE  # loaded on first use

    results: list[Result] = []
    illegal: dict[str, str] = {}
    for deletion in deletions:
        if not deletion.name:
            illegal[deletion.name] = EMPTY_USER
        elif deletion.mechanism not in MECHANISMS_BY_TYPE:
            illegal[deletion.name] = UNKNOWN_MECHANISM
    for upsertion in upsertions:
        if not upsertion.name:
            illegal[upsertion.name] = EMPTY_USER
        elif upsertion.mechanism not in MECHANISMS_BY_TYPE:
            illegal[upsertion.name] = UNKNOWN_MECHANISM
        else:
            mechanism = MECHANISMS_BY_TYPE[upsertion.mechanism]
            if upsertion.iterations > MAX_ITERATIONS:
                illegal[upsertion.name] = "Too many iterations"
            elif upsertion.iterations < mechanism.min_iterations:
                illegal[upsertion.name] = "Too few iterations"
    for user, message in illegal.items():
        unknown = message == UNKNOWN_MECHANISM
        code = ErrorCode.UNSUPPORTED_SASL_MECHANISM if unknown else ErrorCode.UNACCEPTABLE_CREDENTIAL
        results.append(Result(user=user, error_code=code, error_message=message))

    pairs = [(u.name, u.mechanism) for u in upsertions if u.name not in illegal]
    pairs += [(d.name, d.mechanism) for d in deletions if d.name not in illegal]
    duplicated = list(dict.fromkeys(user for user, mechanism in pairs if pairs.count((user, mechanism)) > 1))
    for user in duplicated:
        results.append(
            Result(
                user=user,
                error_code=ErrorCode.DUPLICATE_RESOURCE,
                error_message="A user credential cannot be altered twice in the same request",
            )
        )
    candidates = list(dict.fromkeys(user for user, _ in pairs if user not in duplicated))
    configs = {user: store.user_configs(sanitize(user)) for user in candidates}

    missing = list(
        dict.fromkeys(
            d.name
            for d in deletions
            if d.name in configs and MECHANISMS_BY_TYPE[d.mechanism].mechanism_name not in configs[d.name]
        )
    )
    for user in missing:
        results.append(
            Result(
                user=user,
                error_code=ErrorCode.RESOURCE_NOT_FOUND,
                error_message="Attempt to delete a user credential that does not exist",
            )
        )
    for user in [user for user in candidates if user not in missing]:
        try:
            for deletion in deletions:
                if deletion.name == user:
                    configs[user].pop(MECHANISMS_BY_TYPE[deletion.mechanism].mechanism_name, None)
            for upsertion in upsertions:
                if upsertion.name == user:
                    configs[user][MECHANISMS_BY_TYPE[upsertion.mechanism].mechanism_name] = _credential(upsertion)
            store.set_user_configs(sanitize(user), configs[user])
        except KafkaError as exc:
            log.info("Error encountered while altering user SCRAM credentials of %s: %s", user, exc)
            results.append(Result(user=user, error_code=exc.code, error_message=exc.message_or_default))
            continue
        except ValueError as exc:
            log.info("Error encountered while altering user SCRAM credentials of %s: %s", user, exc)
            error = ErrorCode.UNKNOWN_SERVER_ERROR
            results.append(Result(user=user, error_code=error, error_message=error.message))
            continue
        results.append(Result(user=user, error_code=ErrorCode.NONE, error_message=None))
    return results


def _credential(upsertion: Upsertion) -> str:
    if not upsertion.salted_password:
        raise ValueError("Empty key")  # Java's SecretKeySpec refuses an empty HMAC key
    from ..security.sasl.scram import MECHANISMS_BY_TYPE, ScramCredential

    mechanism = MECHANISMS_BY_TYPE[upsertion.mechanism]
    credential = ScramCredential.from_salted_password(
        mechanism, bytes(upsertion.salt), bytes(upsertion.salted_password), upsertion.iterations
    )
    return credential.to_config()
