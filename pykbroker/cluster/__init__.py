"""The cluster's state: brokers, topics, partition assignments, leaders, ISRs and configs."""
