// The Java client's steps of the compatibility suite's security scenarios (compat/security_clients.py),
// all in one JVM: one step a line on stdin, one answer a line on stdout.
//
//     <client.properties> produce <topic> <value>...       -> OK
//     <client.properties> consume <topic> <group> <count>  -> OK <value>...  (read in the group, committed)
//     <client.properties> topics                           -> OK <topic>...  (what Metadata lists)
//
// A step that fails answers "ERROR <exception class> <message>", the exception being the cause
// the client reported (TopicAuthorizationException, SaslAuthenticationException, ...).

import java.io.BufferedReader;
import java.io.FileReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class SecurityActions {
    static final int STEP_MS = 20_000;

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            List<String> words = Arrays.asList(line.trim().split(" "));
            String answer;
            try {
                answer = "OK " + step(load(words.get(0)), words.get(1), words.subList(2, words.size()));
            } catch (Throwable failure) {
                Throwable cause = reported(failure);
                answer = "ERROR " + cause.getClass().getName() + " " + String.valueOf(cause.getMessage());
            }
            System.out.println(answer.replace('\n', ' ').trim());
            System.out.flush();
        }
    }

    static Properties load(String path) throws Exception {
        Properties properties = new Properties();
        try (FileReader reader = new FileReader(path, StandardCharsets.UTF_8)) {
            properties.load(reader);
        }
        return properties;
    }

    /** The exception the client meant: without ExecutionException and bare KafkaException wrappers. */
    static Throwable reported(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null
                && (cause instanceof ExecutionException || cause.getClass() == KafkaException.class)) {
            cause = cause.getCause();
        }
        return cause;
    }

    static String step(Properties settings, String action, List<String> args) throws Exception {
        switch (action) {
            case "produce": return produce(settings, args.get(0), args.subList(1, args.size()));
            case "consume": return consume(settings, args.get(0), args.get(1), Integer.parseInt(args.get(2)));
            case "topics": return topics(settings);
            default: throw new IllegalArgumentException("unknown step " + action);
        }
    }

    static String produce(Properties settings, String topic, List<String> values) throws Exception {
        settings.put(ProducerConfig.ACKS_CONFIG, "all");
        settings.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, STEP_MS);
        settings.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, STEP_MS / 2);
        settings.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, STEP_MS);
        try (KafkaProducer<byte[], byte[]> producer =
                     new KafkaProducer<>(settings, new ByteArraySerializer(), new ByteArraySerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (String value : values) {
                sent.add(producer.send(new ProducerRecord<>(topic, value.getBytes(StandardCharsets.UTF_8))));
            }
            for (Future<RecordMetadata> future : sent) {
                future.get(STEP_MS, TimeUnit.MILLISECONDS);
            }
        }
        return "";
    }

    static String consume(Properties settings, String topic, String group, int count) {
        settings.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        settings.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        settings.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        settings.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, STEP_MS);
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + STEP_MS;
            while (got.size() < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    got.add(new String(record.value(), StandardCharsets.UTF_8));
                }
            }
            consumer.commitSync();
        }
        return String.join(" ", got);
    }

    static String topics(Properties settings) throws Exception {
        settings.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, STEP_MS);
        settings.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, STEP_MS / 2);
        try (Admin admin = Admin.create(settings)) {
            return String.join(" ", admin.listTopics().names().get(STEP_MS, TimeUnit.MILLISECONDS));
        }
    }
}
