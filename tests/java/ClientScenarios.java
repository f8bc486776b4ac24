// Scenarios of the Java Kafka client (kafka-clients 3.9) against one broker, one per run:
//
//     java -cp <classes>:<kafka-clients and compression jars> ClientScenarios <scenario> <bootstrap> [<topic>]
//
// or many, one after the other in one JVM (`--serve`: one request a line on stdin, see serve()).
//
// Each scenario creates the topics it uses (named <topic>, <topic>-2, ...; a unique name when
// <topic> is not given), drives the client with its default settings unless the scenario is about
// a setting, and checks what comes back. It prints "PASS <scenario>" and exits 0, or prints
// "FAIL <scenario>: <what went wrong>" and the stack trace and exits 1 (2: bad arguments).
//
// The Spark scenarios make the calls of Spark 3.5's Kafka source (AdminClient listOffsets with an
// isolation level, an executor consumer in group spark-kafka-source-*-executor with
// auto.offset.reset=none that assigns, seeks and polls) and of its sink (a KafkaProducer with
// ByteArraySerializer, null keys and headers).

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.DeletedRecords;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.ConsumerGroupState;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class ClientScenarios {
    static final long WAIT_MS = 30_000;  // the longest any step waits for the broker
    static final long T0 = 1_700_000_000_000L;  // record timestamps of the timestamp scenarios

    interface Scenario {
        void run() throws Exception;
    }

    final String bootstrap;
    final String topic;

    ClientScenarios(String bootstrap, String topic) {
        this.bootstrap = bootstrap;
        this.topic = topic;
    }

    Map<String, Scenario> scenarios() {
        Map<String, Scenario> all = new LinkedHashMap<>();
        all.put("producer-defaults", this::producerDefaults);
        for (String codec : List.of("gzip", "snappy", "lz4", "zstd")) {
            all.put("producer-compression-" + codec, () -> producerCompression(codec));
        }
        all.put("group-range", () -> groupSharing(RangeAssignor.class.getName()));
        all.put("group-roundrobin", () -> groupSharing(RoundRobinAssignor.class.getName()));
        all.put("group-cooperative-sticky", this::groupCooperativeSticky);
        all.put("group-commit-resume", this::groupCommitResume);
        all.put("consumer-assign-seek", this::consumerAssignSeek);
        all.put("admin-topics", this::adminTopics);
        all.put("admin-cluster", this::adminCluster);
        all.put("admin-list-offsets", this::adminListOffsets);
        all.put("admin-delete-records", this::adminDeleteRecords);
        all.put("admin-configs", this::adminConfigs);
        all.put("admin-groups", this::adminGroups);
        all.put("spark-source", this::sparkSource);
        all.put("spark-sink", this::sparkSink);
        return all;
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("--serve")) {
            serve();
            return;
        }
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: ClientScenarios <scenario> <bootstrap> [<topic>] | --serve");
            System.exit(2);
        }
        String name = args[0];
        String topic = args.length == 3 ? args[2]
                : name + "-" + UUID.randomUUID().toString().substring(0, 8);
        ClientScenarios scenarios = new ClientScenarios(args[1], topic);
        if (!scenarios.scenarios().containsKey(name)) {
            System.err.println("unknown scenario " + name + "; known: " + scenarios.scenarios().keySet());
            System.exit(2);
        }
        System.exit(scenarios.runAndReport(name, System.err) ? 0 : 1);
    }

    /** Runs scenarios one after the other in this JVM, each asked for by one line on stdin,
     *  "<scenario> TAB <bootstrap> TAB <topic>", until stdin ends. Each answer is its "PASS" or
     *  "FAIL" line (and the failure's stack trace), then the line "END <scenario>". */
    static void serve() throws Exception {
        BufferedReader requests = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = requests.readLine(); line != null; line = requests.readLine()) {
            String[] fields = line.split("\t", -1);
            String name = fields[0];
            if (fields.length != 3) {
                System.out.println("FAIL " + name + ": a request needs <scenario> <bootstrap> <topic>");
            } else {
                new ClientScenarios(fields[1], fields[2]).runAndReport(name, System.out);
            }
            System.out.println("END " + name);
            System.out.flush();
        }
        System.exit(0);  // client threads a failed scenario left behind do not hold the JVM
    }

    /** Runs the scenario; prints "PASS <scenario>", or "FAIL <scenario>: <what went wrong>" and
     *  the stack trace (on `trace`); true when it passed. */
    boolean runAndReport(String name, PrintStream trace) {
        Scenario scenario = scenarios().get(name);
        try {
            if (scenario == null) {
                throw new IllegalArgumentException("unknown scenario; known: " + scenarios().keySet());
            }
            scenario.run();
            System.out.println("PASS " + name);
            System.out.flush();
            return true;
        } catch (Throwable failure) {
            Throwable cause = failure instanceof ExecutionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            System.out.println("FAIL " + name + ": " + cause);
            System.out.flush();
            failure.printStackTrace(trace);
            trace.flush();
            return false;
        }
    }

    // -- the scenarios --------------------------------------------------------------------------

    /** A KafkaProducer with nothing but its serializers set: idempotent, acks=all. Keyed records
     *  land on their key's partition at consecutive offsets, as the producer was told. */
    void producerDefaults() throws Exception {
        ProducerConfig defaults = new ProducerConfig(producerProps(Map.of()));
        check(defaults.getBoolean(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG), "idempotence is the default");
        equal("-1", defaults.getString(ProducerConfig.ACKS_CONFIG), "default acks (all)");

        createTopic(topic, 3);
        List<ProducerRecord<String, String>> sent = new ArrayList<>();
        for (int i = 0; i < 90; i++) {
            sent.add(new ProducerRecord<>(topic, "key-" + (i % 9), "value-" + i));
        }
        List<RecordMetadata> acked = produce(Map.of(), sent);

        Map<String, Integer> partitionOfKey = new HashMap<>();
        Map<Integer, Long> nextOffset = new HashMap<>();
        for (int i = 0; i < sent.size(); i++) {
            RecordMetadata m = acked.get(i);
            Integer before = partitionOfKey.putIfAbsent(sent.get(i).key(), m.partition());
            check(before == null || before == m.partition(), "one key, one partition: %s", sent.get(i).key());
            long expected = nextOffset.getOrDefault(m.partition(), 0L);
            equal(expected, m.offset(), "offset of record " + i + " in partition " + m.partition());
            nextOffset.put(m.partition(), expected + 1);
        }
        check(nextOffset.size() > 1, "nine keys spread over more than one partition: %s", nextOffset);

        List<ConsumerRecord<String, String>> received = readAll(topic, 3, sent.size());
        equal(sent.size(), received.size(), "records read back");
        for (ConsumerRecord<String, String> r : received) {
            int i = Integer.parseInt(r.value().substring("value-".length()));
            equal(sent.get(i).key(), r.key(), "key of value-" + i);
            equal(acked.get(i).partition(), r.partition(), "partition of value-" + i);
            equal(acked.get(i).offset(), r.offset(), "offset of value-" + i);
            equal(acked.get(i).timestamp(), r.timestamp(), "timestamp of value-" + i);
        }
    }

    /** Records compressed with `codec` by the producer are read back whole. */
    void producerCompression(String codec) throws Exception {
        createTopic(topic, 1);
        List<ProducerRecord<String, String>> sent = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            sent.add(new ProducerRecord<>(topic, "key-" + i, (codec + " value " + i + " ").repeat(20)));
        }
        produce(Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec), sent);

        List<ConsumerRecord<String, String>> received = readAll(topic, 1, sent.size());
        equal(sent.size(), received.size(), "records read back");
        for (int i = 0; i < sent.size(); i++) {
            equal(sent.get(i).key(), received.get(i).key(), "key at offset " + i);
            equal(sent.get(i).value(), received.get(i).value(), "value at offset " + i);
            equal((long) i, received.get(i).offset(), "offset");
        }
    }

    /** Two consumers of one group with `assignor` (eager) share a 4-partition topic two and two;
     *  between them they read every record once; after both commit and close, a new member of the
     *  group resumes after the committed offsets. */
    void groupSharing(String assignor) throws Exception {
        createTopic(topic, 4);
        String group = topic + "-group";
        Map<String, Object> settings = Map.of(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignor);
        try (KafkaConsumer<String, String> first = groupConsumer(group, settings);
             KafkaConsumer<String, String> second = groupConsumer(group, settings)) {
            first.subscribe(List.of(topic));
            waitFor(() -> pollOnce(first).isEmpty() && first.assignment().size() == 4,
                    "the first member to own all four partitions");
            second.subscribe(List.of(topic));
            waitFor(() -> {
                pollOnce(first);
                pollOnce(second);
                return first.assignment().size() == 2 && second.assignment().size() == 2;
            }, "two and two partitions");
            Set<TopicPartition> all = new HashSet<>(first.assignment());
            all.addAll(second.assignment());
            equal(4, all.size(), "disjoint assignments covering the topic");

            produce(Map.of(), numbered(topic, "shared", 40));
            Map<String, Integer> readers = new HashMap<>();
            waitFor(() -> {
                for (KafkaConsumer<String, String> c : List.of(first, second)) {
                    for (ConsumerRecord<String, String> r : pollOnce(c)) {
                        check(c.assignment().contains(new TopicPartition(r.topic(), r.partition())),
                              "a member reads only its own partitions");
                        check(readers.put(r.value(), c == first ? 1 : 2) == null, "read twice: %s", r.value());
                    }
                }
                return readers.size() == 40;
            }, "the forty records");
            check(readers.containsValue(1) && readers.containsValue(2), "both members read records");
            first.commitSync();
            second.commitSync();
        }

        produce(Map.of(), numbered(topic, "after", 10));
        try (KafkaConsumer<String, String> next = groupConsumer(group, settings)) {
            next.subscribe(List.of(topic));
            List<String> values = pollValues(next, 10);
            equal(numberedValues("after", 10), sorted(values), "only the records after the commit");
            equal(4, next.assignment().size(), "the rejoined member owns every partition");
        }
    }

    /** With the cooperative-sticky assignor, a member that a second one joins keeps two of its
     *  partitions throughout (it is never asked to revoke them all) and hands over the other two. */
    void groupCooperativeSticky() throws Exception {
        createTopic(topic, 4);
        String group = topic + "-group";
        Map<String, Object> settings = Map.of(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
                                              CooperativeStickyAssignor.class.getName());
        List<Set<TopicPartition>> revoked = new ArrayList<>();
        List<Set<TopicPartition>> lost = new ArrayList<>();
        try (KafkaConsumer<String, String> first = groupConsumer(group, settings);
             KafkaConsumer<String, String> second = groupConsumer(group, settings)) {
            first.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    if (!partitions.isEmpty()) revoked.add(new HashSet<>(partitions));
                }
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) { }
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    lost.add(new HashSet<>(partitions));
                }
            });
            waitFor(() -> pollOnce(first).isEmpty() && first.assignment().size() == 4,
                    "the first member to own all four partitions");
            Set<TopicPartition> before = new HashSet<>(first.assignment());

            second.subscribe(List.of(topic));
            waitFor(() -> {
                pollOnce(first);
                pollOnce(second);
                return first.assignment().size() == 2 && second.assignment().size() == 2;
            }, "two and two partitions");
            Set<TopicPartition> moved = new HashSet<>(second.assignment());
            check(before.containsAll(first.assignment()), "the first member kept partitions it had");
            check(revoked.stream().noneMatch(r -> r.equals(before)),
                  "the first member never revoked everything: %s", revoked);
            Set<TopicPartition> allRevoked = new HashSet<>();
            revoked.forEach(allRevoked::addAll);
            equal(moved, allRevoked, "revoked exactly the partitions that moved");
            check(lost.isEmpty(), "no partitions lost: %s", lost);

            produce(Map.of(), numbered(topic, "cooperative", 20));
            Set<String> values = new HashSet<>();
            waitFor(() -> {
                for (KafkaConsumer<String, String> c : List.of(first, second)) {
                    pollOnce(c).forEach(r -> check(values.add(r.value()), "read twice: %s", r.value()));
                }
                return values.size() == 20;
            }, "the twenty records");
            first.commitSync();
            second.commitSync();
        }
        try (KafkaConsumer<String, String> next = groupConsumer(group, settings)) {
            next.subscribe(List.of(topic));
            waitFor(() -> pollOnce(next).isEmpty() && next.assignment().size() == 4, "a member of its own");
            for (TopicPartition tp : next.assignment()) {
                equal(next.committed(Set.of(tp)).get(tp).offset(), next.position(tp),
                      "position after the committed offset of " + tp);
            }
        }
    }

    /** commitSync with explicit offsets: `committed` reports them and a consumer that rejoins the
     *  group starts there, not at auto.offset.reset. */
    void groupCommitResume() throws Exception {
        createTopic(topic, 2);
        String group = topic + "-group";
        produce(Map.of(), numbered(topic, "first", 20));
        Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = groupConsumer(group, Map.of())) {
            consumer.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> read = poll(consumer, 20);
            for (ConsumerRecord<String, String> r : read) {  // commit only the first three per partition
                if (r.offset() < 3) {
                    committed.put(new TopicPartition(r.topic(), r.partition()),
                                  new OffsetAndMetadata(r.offset() + 1, "seen " + r.value()));
                }
            }
            consumer.commitSync(committed);
            Map<TopicPartition, OffsetAndMetadata> reported = consumer.committed(committed.keySet());
            for (Map.Entry<TopicPartition, OffsetAndMetadata> e : committed.entrySet()) {
                equal(e.getValue().offset(), reported.get(e.getKey()).offset(), "committed offset");
                equal(e.getValue().metadata(), reported.get(e.getKey()).metadata(), "committed metadata");
            }
        }
        try (KafkaConsumer<String, String> consumer = groupConsumer(group, Map.of())) {
            consumer.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> read = poll(consumer, 20 - 6);
            for (ConsumerRecord<String, String> r : read) {
                check(r.offset() >= 3, "resumed after the commit, got offset %d", r.offset());
            }
            equal(14, read.size(), "the records after the commit");
        }
    }

    /** Manual assignment: beginning/end offsets, seek, position, seekToBeginning/End and
     *  offsetsForTimes. */
    void consumerAssignSeek() throws Exception {
        createTopic(topic, 2);
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            records.add(new ProducerRecord<>(topic, 0, T0 + i * 1000L, "k" + i, "v" + i));
        }
        for (int i = 0; i < 5; i++) {
            records.add(new ProducerRecord<>(topic, 1, T0 + i * 1000L, "k" + i, "w" + i));
        }
        produce(Map.of(), records);

        try (KafkaConsumer<String, String> consumer = consumer(Map.of())) {
            consumer.assign(List.of(p0, p1));
            equal(Map.of(p0, 0L, p1, 0L), consumer.beginningOffsets(List.of(p0, p1)), "beginningOffsets");
            equal(Map.of(p0, 10L, p1, 5L), consumer.endOffsets(List.of(p0, p1)), "endOffsets");

            consumer.seek(p0, 4);
            equal(4L, consumer.position(p0), "position after seek");
            consumer.pause(List.of(p1));
            List<ConsumerRecord<String, String>> read = poll(consumer, 6);
            equal(List.of("v4", "v5", "v6", "v7", "v8", "v9"), values(read), "records from offset 4");
            equal(10L, consumer.position(p0), "position after reading to the end");

            consumer.seekToBeginning(List.of(p0));
            equal(0L, consumer.position(p0), "position after seekToBeginning");
            consumer.seekToEnd(List.of(p0));
            equal(10L, consumer.position(p0), "position after seekToEnd");

            Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(
                    Map.of(p0, T0 + 2500, p1, T0 + 99_000));
            equal(3L, found.get(p0).offset(), "offset for a time between records");
            equal(T0 + 3000, found.get(p0).timestamp(), "timestamp of that record");
            check(found.get(p1) == null, "no offset after the last timestamp: %s", found.get(p1));
            equal(0L, consumer.offsetsForTimes(Map.of(p1, T0)).get(p1).offset(), "offset for the first time");

            consumer.seek(p0, found.get(p0).offset());
            equal(List.of("v3", "v4"), values(poll(consumer, 2)).subList(0, 2), "records from that time");
            consumer.resume(List.of(p1));
            consumer.seek(p1, 3);
            equal(List.of("w3", "w4"), values(poll(consumer, 2)), "records of the resumed partition");
        }
    }

    /** createTopics, listTopics, describeTopics, createPartitions, deleteTopics. */
    void adminTopics() throws Exception {
        String second = topic + "-2";
        try (Admin admin = admin()) {
            get(admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1),
                    new NewTopic(second, Optional.empty(), Optional.empty())
                            .configs(Map.of("cleanup.policy", "compact")))).all());
            waitFor(() -> get(admin.listTopics().names()).containsAll(List.of(topic, second)),
                    "listTopics to show both topics");
            check(!get(admin.listTopics().names()).contains("__consumer_offsets"),
                  "internal topics are listed only on request");

            Map<String, TopicDescription> described = get(admin.describeTopics(List.of(topic, second)).allTopicNames());
            TopicDescription created = described.get(topic);
            equal(3, created.partitions().size(), "partitions of " + topic);
            check(!created.isInternal(), "not internal");
            check(created.topicId() != null && !created.topicId().toString().isEmpty(), "a topic id");
            for (TopicPartitionInfo p : created.partitions()) {
                check(p.leader() != null && p.leader().id() >= 0, "partition %d has a leader", p.partition());
                equal(List.of(p.leader()), p.replicas(), "replicas of partition " + p.partition());
                equal(List.of(p.leader()), p.isr(), "in-sync replicas of partition " + p.partition());
            }
            check(described.get(second).partitions().size() >= 1, "broker default partitions");

            get(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(5))).all());
            waitFor(() -> get(admin.describeTopics(List.of(topic)).allTopicNames())
                    .get(topic).partitions().size() == 5, "five partitions");

            get(admin.deleteTopics(List.of(topic, second)).all());
            waitFor(() -> {
                try {
                    get(admin.describeTopics(List.of(topic)).allTopicNames());
                    return false;
                } catch (ExecutionException e) {
                    check(e.getCause() instanceof UnknownTopicOrPartitionException, "unknown topic, got %s", e.getCause());
                    return true;
                }
            }, "the deleted topic to be unknown");
            check(!get(admin.listTopics().names()).contains(second), "deleted topics are not listed");
        }
    }

    /** describeCluster: a cluster id, this broker as the only node, and as the controller. */
    void adminCluster() throws Exception {
        try (Admin admin = admin()) {
            DescribeClusterResult cluster = admin.describeCluster();
            String id = get(cluster.clusterId());
            check(id != null && !id.isEmpty(), "a cluster id");
            Collection<Node> nodes = get(cluster.nodes());
            equal(1, nodes.size(), "nodes");
            Node node = nodes.iterator().next();
            check(bootstrap.equals(node.host() + ":" + node.port()), "the node is the bootstrap broker: %s", node);
            Node controller = get(cluster.controller());
            check(controller != null && controller.id() >= 0, "a controller: %s", controller);
        }
    }

    /** listOffsets earliest, latest, by timestamp and maxTimestamp, at both isolation levels. */
    void adminListOffsets() throws Exception {
        createTopic(topic, 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        long[] times = {T0, T0 + 5000, T0 + 2000, T0 + 1000};
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < times.length; i++) {
            records.add(new ProducerRecord<>(topic, 0, times[i], "k" + i, "v" + i));
        }
        produce(Map.of(), records);

        try (Admin admin = admin()) {
            for (IsolationLevel level : IsolationLevel.values()) {
                ListOffsetsOptions options = new ListOffsetsOptions(level);
                equal(0L, listOffset(admin, tp, OffsetSpec.earliest(), options).offset(), "earliest " + level);
                equal(4L, listOffset(admin, tp, OffsetSpec.latest(), options).offset(), "latest " + level);
                ListOffsetsResultInfo max = listOffset(admin, tp, OffsetSpec.maxTimestamp(), options);
                equal(1L, max.offset(), "offset of the largest timestamp " + level);
                equal(T0 + 5000, max.timestamp(), "largest timestamp " + level);
                ListOffsetsResultInfo byTime = listOffset(admin, tp, OffsetSpec.forTimestamp(T0 + 1500), options);
                equal(1L, byTime.offset(), "first offset at or after the time " + level);
                equal(T0 + 5000, byTime.timestamp(), "its timestamp " + level);
                equal(0L, listOffset(admin, tp, OffsetSpec.forTimestamp(T0), options).offset(), "first time " + level);
                equal(-1L, listOffset(admin, tp, OffsetSpec.forTimestamp(T0 + 6000), options).offset(),
                      "no offset after the largest timestamp " + level);
            }
        }
    }

    /** deleteRecords moves the log start offset: earliest offsets, consumers with
     *  auto.offset.reset=earliest and none follow it. */
    void adminDeleteRecords() throws Exception {
        createTopic(topic, 2);
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            records.add(new ProducerRecord<>(topic, 0, "k" + i, "v" + i));
            records.add(new ProducerRecord<>(topic, 1, "k" + i, "w" + i));
        }
        produce(Map.of(), records);

        try (Admin admin = admin()) {
            DeletedRecords deleted = get(admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(6)))
                    .lowWatermarks().get(p0));
            equal(6L, deleted.lowWatermark(), "low watermark");
            equal(6L, listOffset(admin, p0, OffsetSpec.earliest(), new ListOffsetsOptions()).offset(), "earliest");
            equal(0L, listOffset(admin, p1, OffsetSpec.earliest(), new ListOffsetsOptions()).offset(),
                  "the other partition's earliest");
            equal(10L, listOffset(admin, p0, OffsetSpec.latest(), new ListOffsetsOptions()).offset(), "latest");
        }
        try (KafkaConsumer<String, String> consumer = consumer(Map.of())) {
            consumer.assign(List.of(p0));
            equal(6L, consumer.beginningOffsets(List.of(p0)).get(p0), "beginningOffsets");
            consumer.seek(p0, 2);
            equal(List.of("v6", "v7", "v8", "v9"), values(poll(consumer, 4)),
                  "reset to the new start (auto.offset.reset=earliest)");
        }
        try (KafkaConsumer<String, String> consumer = consumer(Map.of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none"))) {
            consumer.assign(List.of(p0));
            consumer.seek(p0, 2);
            expectOutOfRange(consumer, p0, 2);
        }
    }

    /** describeConfigs of a topic and of the broker; incrementalAlterConfigs SET and DELETE. */
    void adminConfigs() throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = admin()) {
            get(admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)
                    .configs(Map.of("retention.ms", "86400000")))).all());
            Config config = describe(admin, resource);
            ConfigEntry retention = config.get("retention.ms");
            equal("86400000", retention.value(), "retention.ms set at creation");
            equal(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, retention.source(), "its source");
            ConfigEntry cleanup = config.get("cleanup.policy");
            equal("delete", cleanup.value(), "cleanup.policy default");
            check(cleanup.isDefault() || cleanup.source() == ConfigEntry.ConfigSource.DEFAULT_CONFIG
                  || cleanup.source() == ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG,
                  "cleanup.policy comes from a default: %s", cleanup);

            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER,
                    String.valueOf(get(admin.describeCluster().nodes()).iterator().next().id()));
            Config brokerConfig = describe(admin, broker);
            check(brokerConfig.get("num.partitions") != null, "the broker reports num.partitions");
            check(brokerConfig.get("log.retention.hours") != null, "the broker reports log.retention.hours");

            get(admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "3600000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("max.message.bytes", "2000000"), AlterConfigOp.OpType.SET)))).all());
            waitFor(() -> "3600000".equals(describe(admin, resource).get("retention.ms").value()),
                    "retention.ms to change");
            equal("2000000", describe(admin, resource).get("max.message.bytes").value(), "max.message.bytes");

            get(admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", ""), AlterConfigOp.OpType.DELETE)))).all());
            waitFor(() -> describe(admin, resource).get("retention.ms").source()
                    != ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, "retention.ms back to its default");
            equal("604800000", describe(admin, resource).get("retention.ms").value(), "default retention.ms");
        }
    }

    /** listConsumerGroups, describeConsumerGroups (Stable with a member, then Empty),
     *  listConsumerGroupOffsets and deleteConsumerGroups. */
    void adminGroups() throws Exception {
        createTopic(topic, 2);
        String group = topic + "-group";
        produce(Map.of(), numbered(topic, "group", 10));
        try (Admin admin = admin()) {
            try (KafkaConsumer<String, String> consumer = groupConsumer(group, Map.of())) {
                consumer.subscribe(List.of(topic));
                poll(consumer, 10);
                consumer.commitSync();

                Collection<ConsumerGroupListing> groups = get(admin.listConsumerGroups().all());
                check(groups.stream().anyMatch(g -> g.groupId().equals(group) && !g.isSimpleConsumerGroup()),
                      "listConsumerGroups shows %s: %s", group, groups);

                ConsumerGroupDescription described = get(admin.describeConsumerGroups(List.of(group)).all()).get(group);
                equal(ConsumerGroupState.STABLE, described.state(), "state with a member");
                equal("range", described.partitionAssignor(), "assignor");
                equal(1, described.members().size(), "members");
                MemberDescription member = described.members().iterator().next();
                equal(consumer.assignment(), member.assignment().topicPartitions(), "the member's assignment");
                check(described.coordinator() != null && described.coordinator().id() >= 0, "a coordinator");

                Map<TopicPartition, OffsetAndMetadata> offsets =
                        get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
                long total = 0;
                for (OffsetAndMetadata o : offsets.values()) total += o.offset();
                equal(2, offsets.size(), "a committed offset per partition");
                equal(10L, total, "committed offsets add up to the records read");
            }
            waitFor(() -> get(admin.describeConsumerGroups(List.of(group)).all()).get(group).state()
                    == ConsumerGroupState.EMPTY, "the group to be empty after its member closed");
            equal(0, get(admin.describeConsumerGroups(List.of(group)).all()).get(group).members().size(),
                  "no members");
            get(admin.deleteConsumerGroups(List.of(group)).all());
            check(get(admin.listConsumerGroups().all()).stream().noneMatch(g -> g.groupId().equals(group)),
                  "the deleted group is not listed");
        }
    }

    /** The calls of Spark's Kafka source: the driver asks an AdminClient for offsets with the
     *  query's isolation level; an executor consumer (group spark-kafka-source-<uuid>-executor,
     *  auto.offset.reset=none, no auto commit, byte arrays) assigns one partition, seeks and polls
     *  an offset range, finds the available range with seekToBeginning/seekToEnd + position, and
     *  gets OffsetOutOfRangeException for records deleted under it. */
    void sparkSource() throws Exception {
        createTopic(topic, 2);
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            for (int p = 0; p < 2; p++) {
                records.add(new ProducerRecord<>(topic, p, "k" + i, "p" + p + "-" + i));
            }
        }
        produce(Map.of(), records);
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);

        try (Admin admin = admin()) {
            check(get(admin.describeTopics(List.of(topic)).allTopicNames()).get(topic).partitions().size() == 2,
                  "the source describes its subscribed topics");
            check(get(admin.listTopics().names()).contains(topic), "and lists topics for subscribePattern");
            for (IsolationLevel level : IsolationLevel.values()) {
                Map<TopicPartition, ListOffsetsResultInfo> latest = get(admin.listOffsets(
                        Map.of(p0, OffsetSpec.latest(), p1, OffsetSpec.latest()), new ListOffsetsOptions(level)).all());
                equal(10L, latest.get(p0).offset(), "latest of partition 0 " + level);
                equal(10L, latest.get(p1).offset(), "latest of partition 1 " + level);
                Map<TopicPartition, ListOffsetsResultInfo> earliest = get(admin.listOffsets(
                        Map.of(p0, OffsetSpec.earliest(), p1, OffsetSpec.earliest()), new ListOffsetsOptions(level)).all());
                equal(0L, earliest.get(p0).offset(), "earliest " + level);
            }
        }

        for (String isolation : List.of("read_uncommitted", "read_committed")) {
            try (KafkaConsumer<byte[], byte[]> consumer = sparkExecutorConsumer(isolation)) {
                consumer.assign(List.of(p1));
                consumer.seek(p1, 3);
                List<String> range = new ArrayList<>();
                long deadline = System.currentTimeMillis() + WAIT_MS;
                long next = 3;
                while (next < 8 && System.currentTimeMillis() < deadline) {  // the range [3, 8)
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(512))) {
                        if (r.offset() < 8) {
                            equal(next, r.offset(), "consecutive offsets " + isolation);
                            range.add(new String(r.value(), StandardCharsets.UTF_8));
                            next = r.offset() + 1;
                        }
                    }
                }
                equal(List.of("p1-3", "p1-4", "p1-5", "p1-6", "p1-7"), range, "the offset range " + isolation);
                check(consumer.position(p1) >= 8, "position after the range");
                consumer.seekToBeginning(Set.of(p1));
                equal(0L, consumer.position(p1), "available range start " + isolation);
                consumer.seekToEnd(Set.of(p1));
                equal(10L, consumer.position(p1), "available range end " + isolation);
            }
        }

        try (Admin admin = admin()) {
            get(admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(5))).all());
        }
        try (KafkaConsumer<byte[], byte[]> consumer = sparkExecutorConsumer("read_uncommitted")) {
            consumer.assign(List.of(p0));
            consumer.seek(p0, 2);
            expectOutOfRange(consumer, p0, 2);
            consumer.seekToBeginning(Set.of(p0));
            equal(5L, consumer.position(p0), "the available range starts after the deleted records");
            consumer.seek(p0, 5);
            List<String> rest = new ArrayList<>();
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (rest.size() < 5 && System.currentTimeMillis() < deadline) {
                consumer.poll(Duration.ofMillis(512)).forEach(r -> rest.add(new String(r.value(), StandardCharsets.UTF_8)));
            }
            equal(List.of("p0-5", "p0-6", "p0-7", "p0-8", "p0-9"), rest, "the records left");
        }
    }

    /** The producer of Spark's Kafka sink: byte array serializers, records with and without keys,
     *  with headers, to a chosen partition or the partitioner's. */
    void sparkSink() throws Exception {
        createTopic(topic, 3);
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        List<RecordMetadata> acked = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                byte[] key = i % 3 == 0 ? null : ("key-" + i).getBytes(StandardCharsets.UTF_8);
                Integer partition = i % 5 == 0 ? Integer.valueOf(2) : null;
                List<Header> headers = List.of(new RecordHeader("row", String.valueOf(i).getBytes(StandardCharsets.UTF_8)),
                                               new RecordHeader("empty", null));
                futures.add(producer.send(new ProducerRecord<>(topic, partition, null, key,
                        ("row " + i).getBytes(StandardCharsets.UTF_8), headers)));
            }
            producer.flush();
            for (Future<RecordMetadata> f : futures) acked.add(f.get(WAIT_MS, TimeUnit.MILLISECONDS));
        }
        Map<String, Object> consumerProps = new HashMap<>();
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps)) {
            List<TopicPartition> partitions = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1),
                                                      new TopicPartition(topic, 2));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<String, ConsumerRecord<byte[], byte[]>> got = new HashMap<>();
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (got.size() < 30 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    got.put(new String(r.value(), StandardCharsets.UTF_8), r);
                }
            }
            equal(30, got.size(), "rows written");
            for (int i = 0; i < 30; i++) {
                ConsumerRecord<byte[], byte[]> r = got.get("row " + i);
                check(r != null, "row %d", i);
                if (i % 3 == 0) {
                    check(r.key() == null, "row %d has a null key", i);
                } else {
                    equal("key-" + i, new String(r.key(), StandardCharsets.UTF_8), "key of row " + i);
                }
                if (i % 5 == 0) equal(2, r.partition(), "chosen partition of row " + i);
                equal(acked.get(i).partition(), r.partition(), "partition of row " + i);
                equal(acked.get(i).offset(), r.offset(), "offset of row " + i);
                Header[] headers = r.headers().toArray();
                equal(2, headers.length, "headers of row " + i);
                equal("row", headers[0].key(), "first header");
                equal(String.valueOf(i), new String(headers[0].value(), StandardCharsets.UTF_8), "its value");
                equal("empty", headers[1].key(), "second header");
                check(headers[1].value() == null, "a null header value");
            }
        }
    }

    // -- helpers --------------------------------------------------------------------------------

    Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    void createTopic(String name, int partitions) throws Exception {
        try (Admin admin = admin()) {
            get(admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all());
            waitFor(() -> {
                try {
                    TopicDescription d = get(admin.describeTopics(List.of(name)).allTopicNames()).get(name);
                    return d.partitions().size() == partitions
                            && d.partitions().stream().allMatch(p -> p.leader() != null);
                } catch (ExecutionException e) {
                    return false;
                }
            }, "topic " + name + " to be ready");
        }
    }

    Map<String, Object> producerProps(Map<String, Object> settings) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.putAll(settings);
        return props;
    }

    /** Sends the records with a producer of the given settings and returns what it was told. */
    List<RecordMetadata> produce(Map<String, Object> settings, List<ProducerRecord<String, String>> records)
            throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(settings))) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (ProducerRecord<String, String> r : records) futures.add(producer.send(r));
            producer.flush();
            List<RecordMetadata> acked = new ArrayList<>();
            for (Future<RecordMetadata> f : futures) acked.add(f.get(WAIT_MS, TimeUnit.MILLISECONDS));
            return acked;
        }
    }

    static List<ProducerRecord<String, String>> numbered(String topic, String tag, int count) {
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < count; i++) records.add(new ProducerRecord<>(topic, tag + "-key-" + i, tag + "-" + i));
        return records;
    }

    static List<String> numberedValues(String tag, int count) {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < count; i++) values.add(tag + "-" + i);
        return sorted(values);
    }

    KafkaConsumer<String, String> consumer(Map<String, Object> settings) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.putAll(settings);
        return new KafkaConsumer<>(props);
    }

    /** A group member that starts at the beginning of partitions without committed offsets and
     *  commits only when told. */
    KafkaConsumer<String, String> groupConsumer(String group, Map<String, Object> settings) {
        Map<String, Object> props = new HashMap<>(settings);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        return consumer(props);
    }

    KafkaConsumer<byte[], byte[]> sparkExecutorConsumer(String isolation) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "spark-kafka-source-" + UUID.randomUUID() + "--1234-executor");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.RECEIVE_BUFFER_CONFIG, 65536);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        return new KafkaConsumer<>(props);
    }

    /** All `count` records of a topic's partitions from offset 0, in partition and offset order. */
    List<ConsumerRecord<String, String>> readAll(String name, int partitions, int count) {
        try (KafkaConsumer<String, String> consumer = consumer(Map.of())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) tps.add(new TopicPartition(name, p));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            List<ConsumerRecord<String, String>> got = poll(consumer, count);
            got.sort((a, b) -> a.partition() != b.partition() ? Integer.compare(a.partition(), b.partition())
                                                              : Long.compare(a.offset(), b.offset()));
            return got;
        }
    }

    static <K, V> List<ConsumerRecord<K, V>> pollOnce(KafkaConsumer<K, V> consumer) {
        List<ConsumerRecord<K, V>> got = new ArrayList<>();
        consumer.poll(Duration.ofMillis(100)).forEach(got::add);
        return got;
    }

    /** Polls until at least `count` records came (failing after WAIT_MS) and returns them all. */
    static <K, V> List<ConsumerRecord<K, V>> poll(KafkaConsumer<K, V> consumer, int count) {
        List<ConsumerRecord<K, V>> got = new ArrayList<>();
        long deadline = System.currentTimeMillis() + WAIT_MS;
        while (got.size() < count && System.currentTimeMillis() < deadline) {
            consumer.poll(Duration.ofMillis(200)).forEach(got::add);
        }
        check(got.size() >= count, "expected %d records, got %d: %s", count, got.size(), got);
        return got;
    }

    static List<String> pollValues(KafkaConsumer<String, String> consumer, int count) {
        return values(poll(consumer, count));
    }

    static List<String> values(List<ConsumerRecord<String, String>> records) {
        return records.stream().map(ConsumerRecord::value).collect(Collectors.toList());
    }

    static List<String> sorted(Collection<String> values) {
        return values.stream().sorted().collect(Collectors.toList());
    }

    static <K, V> void expectOutOfRange(KafkaConsumer<K, V> consumer, TopicPartition tp, long offset) {
        long deadline = System.currentTimeMillis() + WAIT_MS;
        while (System.currentTimeMillis() < deadline) {
            try {
                int got = consumer.poll(Duration.ofMillis(200)).count();
                check(got == 0, "no records from a deleted offset, got %d", got);
            } catch (OffsetOutOfRangeException e) {
                equal(Map.of(tp, offset), e.offsetOutOfRangePartitions(), "the out-of-range position");
                return;
            }
        }
        throw new AssertionError("no OffsetOutOfRangeException for offset " + offset + " of " + tp);
    }

    static ListOffsetsResultInfo listOffset(Admin admin, TopicPartition tp, OffsetSpec spec,
                                            ListOffsetsOptions options) throws Exception {
        return get(admin.listOffsets(Map.of(tp, spec), options).partitionResult(tp));
    }

    static Config describe(Admin admin, ConfigResource resource) {
        try {
            return get(admin.describeConfigs(List.of(resource)).all()).get(resource);
        } catch (ExecutionException e) {
            throw new AssertionError("describeConfigs " + resource + ": " + e.getCause(), e);
        }
    }

    static <T> T get(org.apache.kafka.common.KafkaFuture<T> future) throws ExecutionException {
        try {
            return future.get(WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
            throw new AssertionError("no answer within " + WAIT_MS + " ms", e);
        }
    }

    interface Condition {
        boolean holds() throws Exception;
    }

    static void waitFor(Condition condition, String what) throws Exception {
        long deadline = System.currentTimeMillis() + WAIT_MS;
        while (!condition.holds()) {
            if (System.currentTimeMillis() > deadline) throw new AssertionError("timed out waiting for " + what);
            Thread.sleep(20);
        }
    }

    static void check(boolean condition, String format, Object... args) {
        if (!condition) throw new AssertionError(String.format(format, args));
    }

    static void equal(Object expected, Object actual, String what) {
        if (!java.util.Objects.equals(expected, actual)) {
            throw new AssertionError(what + ": expected " + expected + ", got " + actual);
        }
    }
}
