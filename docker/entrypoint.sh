#!/bin/sh
# The image's entrypoint: starts pykbroker with, in this order (a later --override wins),
#   1. the image's defaults (listeners, advertised.listeners, log.dirs, pykbroker.metrics.listener),
#   2. one --override per KAFKA_* and PYKBROKER_* environment variable, named as Confluent's and
#      Apache Kafka's images name them: drop KAFKA_ (or Bitnami's KAFKA_CFG_; PYKBROKER_ becomes
#      "pykbroker."), lower-case, then "___" -> "-", "__" -> "_", "_" -> ".":
#          KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://host:9092    --override advertised.listeners=...
#          KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=...             --override listener.security.protocol.map=...
#          PYKBROKER_METRICS_LISTENER=http://0.0.0.0:9404       --override pykbroker.metrics.listener=...
#      KAFKA_LOG4J_ROOT_LOGLEVEL sets --log-level; the JVM's variables (KAFKA_HEAP_OPTS, KAFKA_OPTS,
#      KAFKA_JMX_*, other KAFKA_LOG4J_*, ...) and PYKBROKER_HEALTH_URL are not broker settings and
#      are left out;
#   3. the arguments given to `docker run` (e.g. --override num.partitions=3), appended.
# The default advertised.listeners (PLAINTEXT://localhost:9092) applies only when no listeners are
# set otherwise. A first argument that is not an option runs as a command instead:
#   docker run IMAGE pykbroker topics --bootstrap-server HOST:9092 --list
set -eu

if [ "$#" -gt 0 ] && [ "${1#-}" = "$1" ]; then
    exec "$@"
fi

config_key() {  # KAFKA_LOG_RETENTION_HOURS -> log.retention.hours
    printf '%s\n' "$1" | sed -e 's/^KAFKA_CFG_//' -e 's/^KAFKA_//' -e 's/^PYKBROKER_/PYKBROKER./' | tr 'A-Z' 'a-z' \
        | sed -e 's/___/-/g' -e 's/__/%/g' -e 's/_/./g' -e 's/%/_/g'
}

is_left_out() {
    case "$1" in
        KAFKA_HEAP_OPTS | KAFKA_OPTS | KAFKA_JVM_PERFORMANCE_OPTS | KAFKA_GC_LOG_OPTS | KAFKA_DEBUG \
            | KAFKA_JMX_* | KAFKA_LOG4J_* | KAFKA_TOOLS_* | KAFKA_VERSION | KAFKA_HOME | PYKBROKER_HEALTH_URL)
            return 0 ;;
    esac
    return 1
}

listeners_given=false
for argument in "$@"; do
    case "$argument" in
        listeners=* | advertised.listeners=*) listeners_given=true ;;
    esac
done

# Prepended one by one, so the environment's settings end up in sorted order before "$@"
for name in $(env | sed -n -e 's/^\(KAFKA_[A-Za-z0-9_]*\)=.*/\1/p' -e 's/^\(PYKBROKER_[A-Za-z0-9_]*\)=.*/\1/p' \
        | sort -r -u); do
    is_left_out "$name" && continue
    eval "value=\${$name-}"
    key=$(config_key "$name")
    case "$key" in
        listeners | advertised.listeners) listeners_given=true ;;
    esac
    set -- --override "$key=$value" "$@"
done

set -- --override "pykbroker.metrics.listener=http://0.0.0.0:9404" "$@"
set -- --override "log.dirs=/var/lib/pykbroker" "$@"
if [ "$listeners_given" = false ]; then
    set -- --override "advertised.listeners=PLAINTEXT://localhost:9092" "$@"
fi
set -- --override "listeners=PLAINTEXT://0.0.0.0:9092" "$@"
if [ -n "${KAFKA_LOG4J_ROOT_LOGLEVEL-}" ]; then
    set -- --log-level "$KAFKA_LOG4J_ROOT_LOGLEVEL" "$@"
fi

exec pykbroker /opt/pykbroker/config/server.properties "$@"
