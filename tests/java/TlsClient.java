import java.io.FileInputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Produces records (5, or args[3]) over the settings of a properties file, waiting args[4] ms
 *  (default 0) after each acknowledgement, then consumes them in a group (the file's group.id, or
 *  "<topic>-group"), each exactly once, ignoring records it did not write: prints "PASS tls" or
 *  "FAIL tls: ..." (tests/security/test_tls.py, test_sasl_clients.py, test_security_doc.py). */
public class TlsClient {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1];
        int count = args.length > 3 ? Integer.parseInt(args[3]) : 5;
        long pauseMs = args.length > 4 ? Long.parseLong(args[4]) : 0;
        String run = Long.toHexString(System.nanoTime()) + "-";  // this run's values
        Properties security = new Properties();
        try (FileInputStream in = new FileInputStream(args[2])) { security.load(in); }
        try {
            Properties p = new Properties();
            p.putAll(security);
            p.put("bootstrap.servers", bootstrap);
            p.put("key.serializer", StringSerializer.class.getName());
            p.put("value.serializer", StringSerializer.class.getName());
            p.put("max.block.ms", "20000");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                for (int i = 0; i < count; i++) {
                    producer.send(new ProducerRecord<>(topic, "k" + i, run + "v" + i)).get();
                    Thread.sleep(pauseMs);
                }
            }
            Properties c = new Properties();
            c.putAll(security);
            c.put("bootstrap.servers", bootstrap);
            c.putIfAbsent("group.id", topic + "-group");
            c.put("auto.offset.reset", "earliest");
            c.put("key.deserializer", StringDeserializer.class.getName());
            c.put("value.deserializer", StringDeserializer.class.getName());
            List<String> values = new ArrayList<>();
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
                consumer.subscribe(Collections.singletonList(topic));
                long deadline = System.currentTimeMillis() + 30000;
                while (values.size() < count && System.currentTimeMillis() < deadline) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                        if (r.value().startsWith(run)) values.add(r.value().substring(run.length()));
                    }
                }
                consumer.commitSync();
            }
            if (values.size() != count) { System.out.println("FAIL tls: consumed " + values); System.exit(1); }
            System.out.println("PASS tls " + values);
        } catch (Exception e) {
            System.out.println("FAIL tls: " + e);
            System.exit(1);
        }
    }
}
