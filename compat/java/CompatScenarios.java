// The compatibility suite's scenarios (compat/scenarios.py) for the Java client, all in one JVM:
//
//     java -cp <classes>:<kafka-clients and compression jars> CompatScenarios <bootstrap> <run-id> <scenario>...
//
// Scenario S works on topic compat-java-S-<run-id>, which the suite created beforehand (except in
// the admin scenarios). For each scenario it prints one line: "RESULT S pass", "RESULT S n/a" or
// "RESULT S FAIL <what went wrong>".

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class CompatScenarios {
    static final long WAIT_MS = 30_000;
    static final long T0 = 1_700_000_000_000L;

    interface Scenario {
        void run(String topic) throws Exception;
    }

    final String bootstrap;

    CompatScenarios(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    public static void main(String[] args) {
        if (args.length < 3) {
            System.err.println("usage: CompatScenarios <bootstrap> <run-id> <scenario>...");
            System.exit(2);
        }
        CompatScenarios suite = new CompatScenarios(args[0]);
        for (String name : Arrays.asList(args).subList(2, args.length)) {
            Scenario scenario = suite.scenario(name);
            if (scenario == null) {
                System.out.println("RESULT " + name + " n/a");
                continue;
            }
            try {
                scenario.run("compat-java-" + name + "-" + args[1]);
                System.out.println("RESULT " + name + " pass");
            } catch (Throwable failure) {
                Throwable cause = failure instanceof ExecutionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                System.out.println("RESULT " + name + " FAIL " + String.valueOf(cause).replace('\n', ' '));
                failure.printStackTrace();
            }
            System.out.flush();
        }
        System.exit(0);
    }

    Scenario scenario(String name) {
        if (name.startsWith("compression-")) {
            String codec = name.substring("compression-".length());
            return topic -> compression(topic, codec);
        }
        switch (name) {
            case "metadata": return this::metadata;
            case "produce-consume": return this::produceConsume;
            case "headers-nulls": return this::headersNulls;
            case "offsets-by-timestamp": return this::offsetsByTimestamp;
            case "consumer-group": return this::consumerGroup;
            case "admin-topics": return this::adminTopics;
            case "admin-configs": return this::adminConfigs;
            case "transactions": return this::transactions;
            case "transactional-offsets": return this::transactionalOffsets;
            case "transaction-fencing": return this::transactionFencing;
            default: return null;
        }
    }

    // -- scenarios ------------------------------------------------------------------------------

    void metadata(String topic) throws Exception {
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(Map.of())) {
            List<PartitionInfo> partitions = consumer.partitionsFor(topic);
            equal(List.of(0, 1, 2), partitions.stream().map(PartitionInfo::partition).sorted()
                    .collect(Collectors.toList()), "partitions");
            check(partitions.stream().allMatch(p -> p.leader() != null && p.leader().id() >= 0), "leaders");
            check(consumer.listTopics().containsKey(topic), "listTopics shows the topic");
        }
        try (Admin admin = admin()) {
            Set<Integer> nodes = get(admin.describeCluster().nodes()).stream().map(Node::id).collect(Collectors.toSet());
            TopicDescription described = get(admin.describeTopics(List.of(topic)).allTopicNames()).get(topic);
            check(described.partitions().stream().allMatch(p -> nodes.contains(p.leader().id())),
                  "leaders among the brokers " + nodes);
        }
    }

    void produceConsume(String topic) throws Exception {
        List<byte[][]> sent = keyed(30, "value");
        List<RecordMetadata> acked = produce(topic, sent, Map.of());
        check(acked.stream().allMatch(m -> m.offset() >= 0), "acknowledged with offsets");
        checkRoundTrip(sent, read(topic, 3, sent.size()));
    }

    void compression(String topic, String codec) throws Exception {
        List<byte[][]> sent = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            sent.add(new byte[][] {bytes("key-" + i), bytes((codec + " value " + i + " ").repeat(20))});
        }
        produce(topic, sent, Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec, ProducerConfig.LINGER_MS_CONFIG, 100));
        checkRoundTrip(sent, read(topic, 1, sent.size()));
    }

    void headersNulls(String topic) throws Exception {
        List<Header> headers = List.of(new RecordHeader("trace", bytes("1")), new RecordHeader("trace", bytes("2")),
                                       new RecordHeader("empty", new byte[0]), new RecordHeader("null", null));
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of())) {
            List<Future<RecordMetadata>> futures = List.of(
                    producer.send(new ProducerRecord<>(topic, 0, null, bytes("key"), bytes("value"), headers)),
                    producer.send(new ProducerRecord<>(topic, 0, null, bytes("null key"))),
                    producer.send(new ProducerRecord<>(topic, 0, bytes("tombstone"), null)),
                    producer.send(new ProducerRecord<>(topic, 0, null, null)));
            for (Future<RecordMetadata> f : futures) f.get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        List<ConsumerRecord<byte[], byte[]>> got = read(topic, 1, 4);
        equal(4, got.size(), "records");
        equal("key/value", text(got.get(0).key()) + "/" + text(got.get(0).value()), "first record");
        equal(headers.stream().map(h -> h.key() + "=" + text(h.value())).collect(Collectors.toList()),
              Arrays.stream(got.get(0).headers().toArray()).map(h -> h.key() + "=" + text(h.value()))
                      .collect(Collectors.toList()), "headers");
        equal("null/null key", text(got.get(1).key()) + "/" + text(got.get(1).value()), "null key");
        equal("tombstone/null", text(got.get(2).key()) + "/" + text(got.get(2).value()), "tombstone");
        equal("null/null", text(got.get(3).key()) + "/" + text(got.get(3).value()), "null key and value");
    }

    void offsetsByTimestamp(String topic) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of())) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                futures.add(producer.send(new ProducerRecord<>(topic, 0, T0 + i * 1000L, bytes("k"), bytes("v" + i))));
            }
            for (Future<RecordMetadata> f : futures) f.get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(Map.of())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            OffsetAndTimestamp found = consumer.offsetsForTimes(Map.of(tp, T0 + 2500)).get(tp);
            equal(3L, found.offset(), "offset");
            equal(T0 + 3000, found.timestamp(), "timestamp");
            check(consumer.offsetsForTimes(Map.of(tp, T0 + 9000)).get(tp) == null, "none after the last");
        }
    }

    void consumerGroup(String topic) throws Exception {
        String group = topic + "-group";
        produce(topic, keyed(10, "first"), Map.of());
        Map<String, Object> member = Map.of(ConsumerConfig.GROUP_ID_CONFIG, group,
                                            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<byte[], byte[]> first = consumer(member)) {
            first.subscribe(List.of(topic));
            equal(10, poll(first, 10, WAIT_MS).size(), "records read by the first member");
            first.commitSync();
        }
        List<byte[][]> more = keyed(5, "second");
        produce(topic, more, Map.of());
        try (KafkaConsumer<byte[], byte[]> second = consumer(member)) {
            second.subscribe(List.of(topic));
            List<ConsumerRecord<byte[], byte[]>> got = poll(second, 5, WAIT_MS);
            got.addAll(poll(second, 1, 1000));  // nothing more comes
            equal(more.stream().map(r -> text(r[1])).sorted().collect(Collectors.toList()),
                  got.stream().map(r -> text(r.value())).sorted().collect(Collectors.toList()),
                  "records read after the commit");
            Map<TopicPartition, OffsetAndMetadata> committed = second.committed(
                    Set.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1)));
            equal(10L, committed.values().stream().filter(Objects::nonNull).mapToLong(OffsetAndMetadata::offset).sum(),
                  "committed offsets");
        }
    }

    void adminTopics(String topic) throws Exception {
        try (Admin admin = admin()) {
            get(admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all());
            waitFor(() -> partitions(admin, topic) == 2, "the topic with two partitions");
            check(get(admin.listTopics().names()).contains(topic), "listed");
            get(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(4))).all());
            waitFor(() -> partitions(admin, topic) == 4, "four partitions");
            get(admin.deleteTopics(List.of(topic)).all());
            waitFor(() -> !get(admin.listTopics().names()).contains(topic), "the topic to be gone");
        }
    }

    void adminConfigs(String topic) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = admin()) {
            get(admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)
                    .configs(Map.of("retention.ms", "86400000")))).all());
            equal("86400000", retention(admin, resource), "retention.ms");
            get(admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                    new ConfigEntry("retention.ms", "3600000"), AlterConfigOp.OpType.SET)))).all());
            waitFor(() -> "3600000".equals(retention(admin, resource)), "retention.ms to change");
        }
    }

    /** Commit, abort, commit: read_committed reads the committed records once, in order per
     *  partition, none of the aborted; read_uncommitted reads them all. */
    void transactions(String topic) throws Exception {
        List<byte[][]> first = transactionRecords("committed", 6);
        List<byte[][]> aborted = transactionRecords("aborted", 6);
        List<byte[][]> after = transactionRecords("after", 4);
        try (KafkaProducer<byte[], byte[]> producer = transactionalProducer(topic + "-txn")) {
            for (List<byte[][]> records : List.of(first, aborted, after)) {
                producer.beginTransaction();
                sendAndWait(producer, topic, records);
                if (records == aborted) producer.abortTransaction();
                else producer.commitTransaction();
            }
        }
        Map<Integer, List<String>> committed = byPartition(first, after);
        Map<Integer, List<String>> all = byPartition(first, aborted, after);
        equal(committed, valuesByPartition(readExactly(topic, 2, 10, "read_committed")), "read_committed");
        equal(all, valuesByPartition(readExactly(topic, 2, 16, "read_uncommitted")), "read_uncommitted");
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(Map.of(
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))) {
            List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
            Map<TopicPartition, Long> stable = consumer.endOffsets(tps);
            try (Admin admin = admin()) {
                for (TopicPartition tp : tps) {
                    long end = get(admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.latest()))
                            .partitionResult(tp)).offset();
                    equal(end, stable.get(tp), "the last stable offset is the high watermark of " + tp);
                }
            }
        }
    }

    /** Consume-transform-produce with sendOffsetsToTransaction(offsets, groupMetadata()): the
     *  aborted transaction's offsets never reach the group; a new member resumes after the
     *  committed ones, and the output holds each input record transformed once. */
    void transactionalOffsets(String topic) throws Exception {
        String output = topic + "-out";
        String group = topic + "-group";
        createTopics(output, 1);
        List<byte[][]> input = new ArrayList<>();
        for (int i = 0; i < 10; i++) input.add(new byte[][] {bytes("key-" + i), bytes("in-" + i)});
        produce(topic, input, Map.of());
        TopicPartition tp = new TopicPartition(topic, 0);
        Map<String, Object> member = Map.of(ConsumerConfig.GROUP_ID_CONFIG, group,
                                            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                                            ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaProducer<byte[], byte[]> producer = transactionalProducer(topic + "-txn")) {
            try (KafkaConsumer<byte[], byte[]> first = consumer(member)) {
                first.subscribe(List.of(topic));
                List<ConsumerRecord<byte[], byte[]>> records = poll(first, 10, WAIT_MS);
                equal(10, records.size(), "input read");
                process(producer, first, output, records.subList(0, 5), true);
                process(producer, first, output, records.subList(5, 10), false);
                equal(5L, first.committed(Set.of(tp)).get(tp).offset(), "committed offset after the abort");
            }
            try (KafkaConsumer<byte[], byte[]> second = consumer(member)) {
                second.subscribe(List.of(topic));
                List<ConsumerRecord<byte[], byte[]>> records = poll(second, 5, WAIT_MS);
                records.addAll(poll(second, 1, 1000));  // nothing more comes
                equal(List.of("in-5", "in-6", "in-7", "in-8", "in-9"),
                      records.stream().map(r -> text(r.value())).collect(Collectors.toList()),
                      "input read by the new member");
                process(producer, second, output, records, true);
                // committed() asks with require_stable: it waits for the commit's marker
                equal(10L, second.committed(Set.of(tp)).get(tp).offset(), "committed offset");
            }
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 10; i++) expected.add("out-in-" + i);
        equal(expected, readExactly(output, 1, 10, "read_committed").stream().map(r -> text(r.value()))
                .collect(Collectors.toList()), "output read with read_committed");
        equal(15, readExactly(output, 1, 15, "read_uncommitted").size(), "output read with read_uncommitted");
    }

    void process(KafkaProducer<byte[], byte[]> producer, KafkaConsumer<byte[], byte[]> member, String output,
                 List<ConsumerRecord<byte[], byte[]>> records, boolean commit) throws Exception {
        producer.beginTransaction();
        List<byte[][]> transformed = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            transformed.add(new byte[][] {r.key(), bytes("out-" + text(r.value()))});
        }
        sendAndWait(producer, output, transformed);
        ConsumerRecord<byte[], byte[]> last = records.get(records.size() - 1);
        ConsumerGroupMetadata metadata = member.groupMetadata();
        producer.sendOffsetsToTransaction(Map.of(new TopicPartition(last.topic(), last.partition()),
                                                 new OffsetAndMetadata(last.offset() + 1)), metadata);
        if (commit) producer.commitTransaction();
        else producer.abortTransaction();
    }

    /** A second producer with the same transactional.id fences the first, whose open
     *  transaction is aborted: its commitTransaction throws ProducerFencedException. */
    void transactionFencing(String topic) throws Exception {
        try (KafkaProducer<byte[], byte[]> first = transactionalProducer(topic + "-txn")) {
            first.beginTransaction();
            sendAndWait(first, topic, List.<byte[][]>of(new byte[][] {bytes("key"), bytes("fenced-0")}));
            try (KafkaProducer<byte[], byte[]> second = transactionalProducer(topic + "-txn")) {
                second.beginTransaction();
                sendAndWait(second, topic, List.<byte[][]>of(new byte[][] {bytes("key"), bytes("winner-0")}));
                second.commitTransaction();
            }
            try {
                first.commitTransaction();
                throw new AssertionError("the fenced producer committed");
            } catch (ProducerFencedException expected) {
                // as Kafka: the coordinator answers the stale epoch's EndTxn with PRODUCER_FENCED
            }
        }
        equal(List.of("winner-0"), readExactly(topic, 1, 1, "read_committed").stream()
                .map(r -> text(r.value())).collect(Collectors.toList()), "read_committed");
        equal(List.of("fenced-0", "winner-0"), readExactly(topic, 1, 2, "read_uncommitted").stream()
                .map(r -> text(r.value())).collect(Collectors.toList()), "read_uncommitted");
    }

    // -- helpers --------------------------------------------------------------------------------

    KafkaProducer<byte[], byte[]> transactionalProducer(String transactionalId) {
        KafkaProducer<byte[], byte[]> producer = producer(Map.of(
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId,
                ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 60_000));
        producer.initTransactions();
        return producer;
    }

    /** Sends (key, value) records, the i-th to partition i % 2 when there are two partitions
     *  (records of transactionRecords), and waits for every acknowledgement. */
    static void sendAndWait(KafkaProducer<byte[], byte[]> producer, String topic, List<byte[][]> records)
            throws Exception {
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        for (byte[][] r : records) {
            Integer partition = r.length > 2 ? Integer.valueOf(text(r[2])) : null;
            futures.add(producer.send(new ProducerRecord<>(topic, partition, r[0], r[1])));
        }
        producer.flush();
        for (Future<RecordMetadata> f : futures) f.get(WAIT_MS, TimeUnit.MILLISECONDS);
    }

    /** (key, value, partition) records over partitions 0 and 1, as compat/scenarios.py's. */
    static List<byte[][]> transactionRecords(String tag, int count) {
        List<byte[][]> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            records.add(new byte[][] {bytes("key-" + i), bytes(tag + "-" + i), bytes(String.valueOf(i % 2))});
        }
        return records;
    }

    @SafeVarargs
    static Map<Integer, List<String>> byPartition(List<byte[][]>... transactions) {
        Map<Integer, List<String>> grouped = new java.util.TreeMap<>();
        for (List<byte[][]> records : transactions) {
            for (byte[][] r : records) {
                grouped.computeIfAbsent(Integer.valueOf(text(r[2])), p -> new ArrayList<>()).add(text(r[1]));
            }
        }
        return grouped;
    }

    static Map<Integer, List<String>> valuesByPartition(List<ConsumerRecord<byte[], byte[]>> records) {
        Map<Integer, List<String>> grouped = new java.util.TreeMap<>();
        records.stream().sorted((a, b) -> a.partition() != b.partition() ? Integer.compare(a.partition(), b.partition())
                                                                         : Long.compare(a.offset(), b.offset()))
                .forEach(r -> grouped.computeIfAbsent(r.partition(), p -> new ArrayList<>()).add(text(r.value())));
        return grouped;
    }

    /** `count` records of the topic from the beginning with the isolation level, and whatever
     *  more a second of polling brings (nothing, in the scenarios). */
    List<ConsumerRecord<byte[], byte[]>> readExactly(String topic, int partitions, int count, String isolation) {
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation))) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) tps.add(new TopicPartition(topic, p));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            List<ConsumerRecord<byte[], byte[]>> got = poll(consumer, count, WAIT_MS);
            got.addAll(poll(consumer, 1, 1000));
            return got;
        }
    }

    void createTopics(String name, int partitions) throws Exception {
        try (Admin admin = admin()) {
            get(admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all());
            waitFor(() -> partitions(admin, name) == partitions, "topic " + name + " to be ready");
        }
    }


    Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    KafkaProducer<byte[], byte[]> producer(Map<String, Object> settings) {
        Map<String, Object> props = new HashMap<>(settings);
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return new KafkaProducer<>(props);
    }

    KafkaConsumer<byte[], byte[]> consumer(Map<String, Object> settings) {
        Map<String, Object> props = new HashMap<>(settings);
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return new KafkaConsumer<>(props);
    }

    List<RecordMetadata> produce(String topic, List<byte[][]> records, Map<String, Object> settings) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = producer(settings)) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (byte[][] r : records) futures.add(producer.send(new ProducerRecord<>(topic, r[0], r[1])));
            producer.flush();
            List<RecordMetadata> acked = new ArrayList<>();
            for (Future<RecordMetadata> f : futures) acked.add(f.get(WAIT_MS, TimeUnit.MILLISECONDS));
            return acked;
        }
    }

    List<ConsumerRecord<byte[], byte[]>> read(String topic, int partitions, int count) {
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(Map.of())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) tps.add(new TopicPartition(topic, p));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            return poll(consumer, count, WAIT_MS);
        }
    }

    static List<ConsumerRecord<byte[], byte[]>> poll(KafkaConsumer<byte[], byte[]> consumer, int count, long ms) {
        List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
        long deadline = System.currentTimeMillis() + ms;
        while (got.size() < count && System.currentTimeMillis() < deadline) {
            consumer.poll(Duration.ofMillis(200)).forEach(got::add);
        }
        return got;
    }

    /** Each sent record read back once, each partition at consecutive offsets, one partition per
     *  key, and the sending order kept within a partition. */
    static void checkRoundTrip(List<byte[][]> sent, List<ConsumerRecord<byte[], byte[]>> received) {
        List<String> expected = sent.stream().map(r -> text(r[0]) + "=" + text(r[1])).sorted().collect(Collectors.toList());
        List<String> actual = received.stream().map(r -> text(r.key()) + "=" + text(r.value())).sorted()
                .collect(Collectors.toList());
        equal(expected, actual, "records read back");
        Map<Integer, List<ConsumerRecord<byte[], byte[]>>> byPartition = received.stream()
                .collect(Collectors.groupingBy(ConsumerRecord::partition));
        Map<String, Integer> order = new HashMap<>();
        for (int i = 0; i < sent.size(); i++) order.put(text(sent.get(i)[0]) + "=" + text(sent.get(i)[1]), i);
        Map<String, Integer> partitionOfKey = new HashMap<>();
        for (List<ConsumerRecord<byte[], byte[]>> records : byPartition.values()) {
            records.sort((a, b) -> Long.compare(a.offset(), b.offset()));
            for (int i = 0; i < records.size(); i++) {
                ConsumerRecord<byte[], byte[]> r = records.get(i);
                equal(records.get(0).offset() + i, r.offset(), "consecutive offsets in partition " + r.partition());
                Integer other = partitionOfKey.putIfAbsent(text(r.key()), r.partition());
                check(other == null || other == r.partition(), "one partition per key");
                if (i > 0) {
                    ConsumerRecord<byte[], byte[]> before = records.get(i - 1);
                    check(order.get(text(before.key()) + "=" + text(before.value()))
                          < order.get(text(r.key()) + "=" + text(r.value())), "sending order kept");
                }
            }
        }
    }

    static List<byte[][]> keyed(int count, String tag) {
        List<byte[][]> records = new ArrayList<>();
        for (int i = 0; i < count; i++) records.add(new byte[][] {bytes("key-" + (i % 5)), bytes(tag + "-" + i)});
        return records;
    }

    static int partitions(Admin admin, String topic) throws Exception {
        try {
            TopicDescription d = get(admin.describeTopics(List.of(topic)).allTopicNames()).get(topic);
            return d.partitions().stream().allMatch(p -> p.leader() != null) ? d.partitions().size() : -1;
        } catch (ExecutionException e) {
            return -1;
        }
    }

    static String retention(Admin admin, ConfigResource resource) throws Exception {
        return get(admin.describeConfigs(List.of(resource)).all()).get(resource).get("retention.ms").value();
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] bytes) {
        return bytes == null ? "null" : new String(bytes, StandardCharsets.UTF_8);
    }

    static <T> T get(KafkaFuture<T> future) throws Exception {
        return future.get(WAIT_MS, TimeUnit.MILLISECONDS);
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

    static void check(boolean condition, String what) {
        if (!condition) throw new AssertionError(what);
    }

    static void equal(Object expected, Object actual, String what) {
        if (!Objects.equals(expected, actual)) throw new AssertionError(what + ": expected " + expected + ", got " + actual);
    }
}
