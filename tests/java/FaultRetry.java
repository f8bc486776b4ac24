// The Java client's retry path under an injected fault: a KafkaProducer with its default settings
// (idempotent, acks=all) sends <count> records to partition 0 of an existing <topic> while the
// broker answers some of its Produce requests with a retriable error; then a consumer reads the
// partition from the beginning.
//
//     java -cp <classes>:<kafka-clients jars> FaultRetry <bootstrap> <topic> <count>
//
// Prints "PASS" and exits 0 when every send succeeded and the partition holds exactly the records
// sent, once each and in order; otherwise prints "FAIL <what went wrong>" and exits 1.

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class FaultRetry {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int count = Integer.parseInt(args[2]);
        try {
            produce(bootstrap, topic, count);
            List<String> read = readAll(bootstrap, topic, count);
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                expected.add("value-" + i);
            }
            if (!read.equals(expected)) {
                throw new AssertionError("the partition holds " + read + ", expected " + expected);
            }
            System.out.println("PASS");
            System.exit(0);
        } catch (Throwable failure) {
            System.out.println("FAIL " + failure);
            failure.printStackTrace();
            System.exit(1);
        }
    }

    static void produce(String bootstrap, String topic, int count) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "fault-retry-producer");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, 0, "key-" + i, "value-" + i)));
            }
            producer.flush();
            for (int i = 0; i < count; i++) {
                long offset = sent.get(i).get().offset();
                if (offset != i) {
                    throw new AssertionError("record " + i + " was acknowledged at offset " + offset);
                }
            }
        }
    }

    static List<String> readAll(String bootstrap, String topic, int count) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long deadline = System.currentTimeMillis() + 30_000;
            while (System.currentTimeMillis() < deadline && consumer.position(partition) < count) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }
}
