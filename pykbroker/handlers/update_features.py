"""UpdateFeatures (key 57), versions 0-1.

Answered as Kafka 3.9's ZooKeeper-mode controller answers it. The caller needs ALTER on the cluster
(else CLUSTER_AUTHORIZATION_FAILED for the whole request, no results); in a cluster only the
controller serves it (NOT_CONTROLLER elsewhere: admin clients send it to the controller). Then each
feature gets its result, every one INVALID_REQUEST with Kafka's message, since no feature can be
finalized through it (`cluster/features.py`: Kafka 3.9 in ZooKeeper mode supports none, and
pykbroker's group.version and share.version follow `group.coordinator.rebalance.protocols`):

- an upgrade type other than UPGRADE (1), SAFE_DOWNGRADE (2) or UNSAFE_DOWNGRADE (3) (v1; v0's
  AllowDowngrade means SAFE_DOWNGRADE): "Received unknown upgrade type.";
- a level below 1 asked as an upgrade: "Can not provide versionLevel: <level> less than 1 without
  setting the SAFE downgradeType in the request.";
- a level below 1 (a deletion) of a feature not finalized: "Can not delete non-existing finalized
  feature.";
- anything else: "Could not apply finalized feature update because the provided feature is not
  supported."

A feature named twice gets the result of its first update. Results come in the order of the Scala
hash map Kafka collects them in; ValidateOnly changes nothing (nothing is ever applied). An empty
list of updates is answered with no results.
"""

from __future__ import annotations

from ..cluster.features import finalized_features, updatable_features
from ..common.java_order import scala_hash_map_order
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import UpdateFeaturesRequest, UpdateFeaturesResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.UPDATE_FEATURES
MIN_VERSION = 0
MAX_VERSION = 1

ALTER_CLUSTER = check(API_KEY, "cluster")

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
UNKNOWN_UPGRADE_TYPE = "Received unknown upgrade type."
NOT_SUPPORTED = "Could not apply finalized feature update because the provided feature is not supported."
NOT_FINALIZED = "Can not delete non-existing finalized feature."

Result = UpdateFeaturesResponse.UpdatableFeatureResult
Update = UpdateFeaturesRequest.FeatureUpdateKey


async def handle(request: UpdateFeaturesRequest, ctx: RequestContext) -> UpdateFeaturesResponse:
    if not ALTER_CLUSTER.allows(ctx):
        return _refused(ALTER_CLUSTER.denied)
    in_cluster = bool(ctx.services.config.get("zookeeper.connect"))
    if in_cluster and ctx.services.metadata.controller_id != ctx.services.broker_id:
        return _refused(ErrorCode.NOT_CONTROLLER)
    finalized = finalized_features(ctx.services.config)
    messages: dict[str, str] = {}
    for update in request.feature_updates:
        if update.feature not in messages:  # the first update of a feature is the one answered
            messages[update.feature] = _refusal(update, _upgrade_type(update, ctx.api_version), finalized)
    return UpdateFeaturesResponse(
        error_code=ErrorCode.NONE,
        error_message=None,
        results=[
            Result(feature=name, error_code=ErrorCode.INVALID_REQUEST, error_message=messages[name])
            for name in scala_hash_map_order(messages)
        ],
    )


def _refused(error: ErrorCode) -> UpdateFeaturesResponse:
    """A whole-request error: Kafka's ApiError carries the error's default message, no results."""
    return UpdateFeaturesResponse(error_code=error, error_message=error.message, results=[])


def _upgrade_type(update: Update, version: int) -> int:
    if version == 0:
        return SAFE_DOWNGRADE if update.allow_downgrade else UPGRADE
    return int(update.upgrade_type)


def _refusal(update: Update, upgrade_type: int, finalized: dict[str, int]) -> str:
    """Why Kafka's ZooKeeper-mode controller refuses this update (it refuses every one)."""
    if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        return UNKNOWN_UPGRADE_TYPE
    deletion = update.max_version_level < 1
    if deletion and upgrade_type == UPGRADE:
        return (
            f"Can not provide versionLevel: {update.max_version_level} less than 1 without setting "
            "the SAFE downgradeType in the request."
        )
    if deletion and update.feature not in finalized:
        return NOT_FINALIZED
    if update.feature not in updatable_features():
        return NOT_SUPPORTED
    raise AssertionError(f"no feature is updatable, yet {update.feature} is")  # pragma: no cover
