"""Client quotas: the sensors (sampled rates, token buckets) and Kafka's quota managers."""
