"""Kafka API keys by name, and the message name of each (from the schemas in protocol/messages/)."""

from enum import IntEnum


class ApiKey(IntEnum):
    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    LEADER_AND_ISR = 4
    STOP_REPLICA = 5
    UPDATE_METADATA = 6
    CONTROLLED_SHUTDOWN = 7
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    WRITE_TXN_MARKERS = 27
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    ALTER_REPLICA_LOG_DIRS = 34
    DESCRIBE_LOG_DIRS = 35
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    CREATE_DELEGATION_TOKEN = 38
    RENEW_DELEGATION_TOKEN = 39
    EXPIRE_DELEGATION_TOKEN = 40
    DESCRIBE_DELEGATION_TOKEN = 41
    DELETE_GROUPS = 42
    ELECT_LEADERS = 43
    INCREMENTAL_ALTER_CONFIGS = 44
    ALTER_PARTITION_REASSIGNMENTS = 45
    LIST_PARTITION_REASSIGNMENTS = 46
    OFFSET_DELETE = 47
    DESCRIBE_CLIENT_QUOTAS = 48
    ALTER_CLIENT_QUOTAS = 49
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    VOTE = 52
    BEGIN_QUORUM_EPOCH = 53
    END_QUORUM_EPOCH = 54
    DESCRIBE_QUORUM = 55
    ALTER_PARTITION = 56
    UPDATE_FEATURES = 57
    ENVELOPE = 58
    FETCH_SNAPSHOT = 59
    DESCRIBE_CLUSTER = 60
    DESCRIBE_PRODUCERS = 61
    BROKER_REGISTRATION = 62
    BROKER_HEARTBEAT = 63
    UNREGISTER_BROKER = 64
    DESCRIBE_TRANSACTIONS = 65
    LIST_TRANSACTIONS = 66
    ALLOCATE_PRODUCER_IDS = 67
    CONSUMER_GROUP_HEARTBEAT = 68
    CONSUMER_GROUP_DESCRIBE = 69
    CONTROLLER_REGISTRATION = 70
    GET_TELEMETRY_SUBSCRIPTIONS = 71
    PUSH_TELEMETRY = 72
    ASSIGN_REPLICAS_TO_DIRS = 73
    LIST_CLIENT_METRICS_RESOURCES = 74
    DESCRIBE_TOPIC_PARTITIONS = 75
    SHARE_GROUP_HEARTBEAT = 76
    SHARE_GROUP_DESCRIBE = 77
    SHARE_FETCH = 78
    SHARE_ACKNOWLEDGE = 79
    ADD_RAFT_VOTER = 80
    REMOVE_RAFT_VOTER = 81
    UPDATE_RAFT_VOTER = 82
    INITIALIZE_SHARE_GROUP_STATE = 83
    READ_SHARE_GROUP_STATE = 84
    WRITE_SHARE_GROUP_STATE = 85
    DELETE_SHARE_GROUP_STATE = 86
    READ_SHARE_GROUP_STATE_SUMMARY = 87
    DESCRIBE_SHARE_GROUP_OFFSETS = 90
    ALTER_SHARE_GROUP_OFFSETS = 91
    DELETE_SHARE_GROUP_OFFSETS = 92


# The schema name of each API: "<name>Request" and "<name>Response" in protocol/messages/.
MESSAGE_NAMES: dict[int, str] = {  # looked up by ApiKey members and by plain ints from the wire
    ApiKey.PRODUCE: "Produce",
    ApiKey.FETCH: "Fetch",
    ApiKey.LIST_OFFSETS: "ListOffsets",
    ApiKey.METADATA: "Metadata",
    ApiKey.LEADER_AND_ISR: "LeaderAndIsr",
    ApiKey.STOP_REPLICA: "StopReplica",
    ApiKey.UPDATE_METADATA: "UpdateMetadata",
    ApiKey.CONTROLLED_SHUTDOWN: "ControlledShutdown",
    ApiKey.OFFSET_COMMIT: "OffsetCommit",
    ApiKey.OFFSET_FETCH: "OffsetFetch",
    ApiKey.FIND_COORDINATOR: "FindCoordinator",
    ApiKey.JOIN_GROUP: "JoinGroup",
    ApiKey.HEARTBEAT: "Heartbeat",
    ApiKey.LEAVE_GROUP: "LeaveGroup",
    ApiKey.SYNC_GROUP: "SyncGroup",
    ApiKey.DESCRIBE_GROUPS: "DescribeGroups",
    ApiKey.LIST_GROUPS: "ListGroups",
    ApiKey.SASL_HANDSHAKE: "SaslHandshake",
    ApiKey.API_VERSIONS: "ApiVersions",
    ApiKey.CREATE_TOPICS: "CreateTopics",
    ApiKey.DELETE_TOPICS: "DeleteTopics",
    ApiKey.DELETE_RECORDS: "DeleteRecords",
    ApiKey.INIT_PRODUCER_ID: "InitProducerId",
    ApiKey.OFFSET_FOR_LEADER_EPOCH: "OffsetForLeaderEpoch",
    ApiKey.ADD_PARTITIONS_TO_TXN: "AddPartitionsToTxn",
    ApiKey.ADD_OFFSETS_TO_TXN: "AddOffsetsToTxn",
    ApiKey.END_TXN: "EndTxn",
    ApiKey.WRITE_TXN_MARKERS: "WriteTxnMarkers",
    ApiKey.TXN_OFFSET_COMMIT: "TxnOffsetCommit",
    ApiKey.DESCRIBE_ACLS: "DescribeAcls",
    ApiKey.CREATE_ACLS: "CreateAcls",
    ApiKey.DELETE_ACLS: "DeleteAcls",
    ApiKey.DESCRIBE_CONFIGS: "DescribeConfigs",
    ApiKey.ALTER_CONFIGS: "AlterConfigs",
    ApiKey.ALTER_REPLICA_LOG_DIRS: "AlterReplicaLogDirs",
    ApiKey.DESCRIBE_LOG_DIRS: "DescribeLogDirs",
    ApiKey.SASL_AUTHENTICATE: "SaslAuthenticate",
    ApiKey.CREATE_PARTITIONS: "CreatePartitions",
    ApiKey.CREATE_DELEGATION_TOKEN: "CreateDelegationToken",
    ApiKey.RENEW_DELEGATION_TOKEN: "RenewDelegationToken",
    ApiKey.EXPIRE_DELEGATION_TOKEN: "ExpireDelegationToken",
    ApiKey.DESCRIBE_DELEGATION_TOKEN: "DescribeDelegationToken",
    ApiKey.DELETE_GROUPS: "DeleteGroups",
    ApiKey.ELECT_LEADERS: "ElectLeaders",
    ApiKey.INCREMENTAL_ALTER_CONFIGS: "IncrementalAlterConfigs",
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: "AlterPartitionReassignments",
    ApiKey.LIST_PARTITION_REASSIGNMENTS: "ListPartitionReassignments",
    ApiKey.OFFSET_DELETE: "OffsetDelete",
    ApiKey.DESCRIBE_CLIENT_QUOTAS: "DescribeClientQuotas",
    ApiKey.ALTER_CLIENT_QUOTAS: "AlterClientQuotas",
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: "DescribeUserScramCredentials",
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: "AlterUserScramCredentials",
    ApiKey.VOTE: "Vote",
    ApiKey.BEGIN_QUORUM_EPOCH: "BeginQuorumEpoch",
    ApiKey.END_QUORUM_EPOCH: "EndQuorumEpoch",
    ApiKey.DESCRIBE_QUORUM: "DescribeQuorum",
    ApiKey.ALTER_PARTITION: "AlterPartition",
    ApiKey.UPDATE_FEATURES: "UpdateFeatures",
    ApiKey.ENVELOPE: "Envelope",
    ApiKey.FETCH_SNAPSHOT: "FetchSnapshot",
    ApiKey.DESCRIBE_CLUSTER: "DescribeCluster",
    ApiKey.DESCRIBE_PRODUCERS: "DescribeProducers",
    ApiKey.BROKER_REGISTRATION: "BrokerRegistration",
    ApiKey.BROKER_HEARTBEAT: "BrokerHeartbeat",
    ApiKey.UNREGISTER_BROKER: "UnregisterBroker",
    ApiKey.DESCRIBE_TRANSACTIONS: "DescribeTransactions",
    ApiKey.LIST_TRANSACTIONS: "ListTransactions",
    ApiKey.ALLOCATE_PRODUCER_IDS: "AllocateProducerIds",
    ApiKey.CONSUMER_GROUP_HEARTBEAT: "ConsumerGroupHeartbeat",
    ApiKey.CONSUMER_GROUP_DESCRIBE: "ConsumerGroupDescribe",
    ApiKey.CONTROLLER_REGISTRATION: "ControllerRegistration",
    ApiKey.GET_TELEMETRY_SUBSCRIPTIONS: "GetTelemetrySubscriptions",
    ApiKey.PUSH_TELEMETRY: "PushTelemetry",
    ApiKey.ASSIGN_REPLICAS_TO_DIRS: "AssignReplicasToDirs",
    ApiKey.LIST_CLIENT_METRICS_RESOURCES: "ListClientMetricsResources",
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: "DescribeTopicPartitions",
    ApiKey.SHARE_GROUP_HEARTBEAT: "ShareGroupHeartbeat",
    ApiKey.SHARE_GROUP_DESCRIBE: "ShareGroupDescribe",
    ApiKey.SHARE_FETCH: "ShareFetch",
    ApiKey.SHARE_ACKNOWLEDGE: "ShareAcknowledge",
    ApiKey.ADD_RAFT_VOTER: "AddRaftVoter",
    ApiKey.REMOVE_RAFT_VOTER: "RemoveRaftVoter",
    ApiKey.UPDATE_RAFT_VOTER: "UpdateRaftVoter",
    ApiKey.INITIALIZE_SHARE_GROUP_STATE: "InitializeShareGroupState",
    ApiKey.READ_SHARE_GROUP_STATE: "ReadShareGroupState",
    ApiKey.WRITE_SHARE_GROUP_STATE: "WriteShareGroupState",
    ApiKey.DELETE_SHARE_GROUP_STATE: "DeleteShareGroupState",
    ApiKey.READ_SHARE_GROUP_STATE_SUMMARY: "ReadShareGroupStateSummary",
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: "DescribeShareGroupOffsets",
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: "AlterShareGroupOffsets",
    ApiKey.DELETE_SHARE_GROUP_OFFSETS: "DeleteShareGroupOffsets",
}
