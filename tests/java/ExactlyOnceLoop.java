// An exactly-once consume-transform-produce loop with the Java client (kafka-clients 3.9), as
// services write it: a group member reads the input topic with read_committed, and for every
// poll a transactional producer writes one output record per input record ("out-" + value, same
// key, same partition number) and sends the consumed offsets with
// sendOffsetsToTransaction(offsets, consumer.groupMetadata()) before committing.
//
//     java -cp <classes>:<kafka-clients jars> ExactlyOnceLoop <bootstrap> <input> <output> <group> <transactional-id> <partitions> [<hang-after>]
//
// It prints "COMMITTED <n>" after each committed transaction. With <hang-after>, after that many
// commits it begins one more transaction, sends its output records and offsets, sees them
// acknowledged, prints "HANGING" and waits forever (to be killed with kill -9 in the middle of a
// transaction). Otherwise it stops when its position and committed offset have reached the end
// of every input partition, printing "DONE" (exit 0); "FAIL <why>" (exit 1) on any error.

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class ExactlyOnceLoop {
    static final long GIVE_UP_MS = 120_000;

    public static void main(String[] args) {
        if (args.length < 6 || args.length > 7) {
            System.err.println("usage: ExactlyOnceLoop <bootstrap> <input> <output> <group> <transactional-id> <partitions> [<hang-after>]");
            System.exit(2);
        }
        try {
            run(args[0], args[1], args[2], args[3], args[4], Integer.parseInt(args[5]),
                args.length == 7 ? Integer.parseInt(args[6]) : -1);
            System.out.println("DONE");
            System.out.flush();
            System.exit(0);
        } catch (Throwable failure) {
            System.out.println("FAIL " + failure);
            System.out.flush();
            failure.printStackTrace();
            System.exit(1);
        }
    }

    static void run(String bootstrap, String input, String output, String group, String transactionalId,
                    int partitions, int hangAfter) throws Exception {
        Map<String, Object> consumerProps = new HashMap<>();
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        consumerProps.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        consumerProps.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumerProps.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10);
        // the killed member leaves the group when its session expires: keep that short
        consumerProps.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6000);
        consumerProps.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1000);
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        Map<String, Object> producerProps = new HashMap<>();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        producerProps.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        producerProps.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 60_000);
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());

        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps);
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps)) {
            producer.initTransactions();
            consumer.subscribe(List.of(input));
            int commits = 0;
            long deadline = System.currentTimeMillis() + GIVE_UP_MS;
            while (System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    if (finished(consumer, input, partitions)) return;
                    continue;
                }
                producer.beginTransaction();
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    byte[] value = ("out-" + new String(r.value(), StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
                    sent.add(producer.send(new ProducerRecord<>(output, r.partition(), r.key(), value)));
                    offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                if (commits == hangAfter) {
                    producer.flush();
                    for (Future<RecordMetadata> f : sent) f.get(30, TimeUnit.SECONDS);
                    System.out.println("HANGING");
                    System.out.flush();
                    Thread.sleep(Long.MAX_VALUE);
                }
                producer.commitTransaction();
                commits++;
                System.out.println("COMMITTED " + commits);
                System.out.flush();
            }
            throw new AssertionError("the input was not processed within " + GIVE_UP_MS + " ms");
        }
    }

    /** Every input partition is assigned, and both the position and the committed offset are at
     *  its end (the last stable offset, as this read_committed consumer sees it). */
    static boolean finished(KafkaConsumer<byte[], byte[]> consumer, String input, int partitions) {
        Set<TopicPartition> assigned = consumer.assignment();
        if (assigned.size() != partitions) return false;
        Map<TopicPartition, Long> ends = consumer.endOffsets(assigned);
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(assigned);
        for (TopicPartition tp : assigned) {
            long end = ends.get(tp);
            OffsetAndMetadata done = committed.get(tp);
            if (consumer.position(tp) < end || done == null || done.offset() < end) return false;
        }
        return true;
    }
}
