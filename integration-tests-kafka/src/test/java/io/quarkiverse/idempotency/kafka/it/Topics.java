package io.quarkiverse.idempotency.kafka.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The test's side of Kafka: publishes payments to this JVM's topic, reads its dead-letter topic, and compares the
 * application's committed offsets with the topic's end.
 */
public final class Topics implements AutoCloseable {

    private final KafkaProducer<String, String> producer;
    private final Admin admin;

    public Topics() {
        Properties producerConfig = KafkaServices.clientProperties();
        producerConfig.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerConfig.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerConfig.put(ProducerConfig.ACKS_CONFIG, "all");
        this.producer = new KafkaProducer<>(producerConfig);
        this.admin = Admin.create(KafkaServices.clientProperties());
    }

    /** @return a payment's JSON */
    public static String payment(String orderId, long amountCents) {
        return "{\"orderId\":\"" + orderId + "\",\"amountCents\":" + amountCents + "}";
    }

    /**
     * Publishes a record and waits for the broker to have it.
     *
     * @param key the record key, which decides the partition: records with one key stay in order
     */
    public void publish(String key, String value) {
        try {
            producer.send(new ProducerRecord<>(KafkaServices.TOPIC, key, value)).get();
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException("Could not publish to " + KafkaServices.TOPIC, e);
        }
    }

    /** Publishes a record with headers to a topic and waits for the broker to have it. */
    public void publish(String topic, String key, String value, Map<String, String> headers) {
        ProducerRecord<String, String> record = new ProducerRecord<>(topic, key, value);
        headers.forEach((name, text) -> record.headers().add(name, text.getBytes(StandardCharsets.UTF_8)));
        try {
            producer.send(record).get();
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException("Could not publish to " + topic, e);
        }
    }

    /** Publishes a record to one partition and waits for the broker to have it. */
    public void publish(int partition, String key, String value) {
        try {
            producer.send(new ProducerRecord<>(KafkaServices.TOPIC, partition, key, value)).get();
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException("Could not publish to " + KafkaServices.TOPIC, e);
        }
    }

    /**
     * Joins the application's consumer group, which takes partitions from the application (a rebalance); the consumer
     * never commits. Its client id sorts before the application's, so that the range assignor gives it partition 0.
     */
    public KafkaConsumer<String, String> joinGroup() {
        Properties config = KafkaServices.clientProperties();
        config.put(ConsumerConfig.GROUP_ID_CONFIG, KafkaServices.GROUP);
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, "a-test-consumer");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config);
        consumer.subscribe(List.of(KafkaServices.TOPIC));
        return consumer;
    }

    /** @return every record of the payments' dead-letter topic so far, each as its value and its headers */
    public List<DeadLetter> deadLetters() {
        return deadLetters(KafkaServices.DEAD_LETTERS);
    }

    /** @return every record of a dead-letter topic (one partition) so far, each as its value and its headers */
    public List<DeadLetter> deadLetters(String topic) {
        List<DeadLetter> letters = new ArrayList<>();
        for (ConsumerRecord<String, String> record : records(topic)) {
            Map<String, String> headers = new HashMap<>();
            for (Header header : record.headers()) {
                headers.put(header.key(), new String(header.value(), StandardCharsets.UTF_8));
            }
            letters.add(new DeadLetter(record.value(), headers));
        }
        return letters;
    }

    /** @return every record of a topic of one partition so far, as Kafka holds it */
    public List<ConsumerRecord<String, String>> records(String topic) {
        Properties config = KafkaServices.clientProperties();
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            while (consumer.position(partition) < end) {
                consumer.poll(Duration.ofMillis(500)).forEach(records::add);
            }
        }
        return records;
    }

    /** A record of the dead-letter topic. */
    public record DeadLetter(String value, Map<String, String> headers) {
    }

    /** @return how many records of the topic the application's group has not committed past yet */
    public long uncommitted() {
        try {
            Map<TopicPartition, OffsetAndMetadata> committed = admin
                    .listConsumerGroupOffsets(KafkaServices.GROUP).partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (int p = 0; p < 2; p++) {
                latest.put(new TopicPartition(KafkaServices.TOPIC, p), OffsetSpec.latest());
            }
            long behind = 0;
            for (Map.Entry<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> end : admin.listOffsets(latest)
                    .all().get().entrySet()) {
                OffsetAndMetadata done = committed.get(end.getKey());
                behind += end.getValue().offset() - (done == null ? 0 : done.offset());
            }
            return behind;
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException("Could not read the offsets of group " + KafkaServices.GROUP, e);
        }
    }

    /** @return how many consumers the application's group has */
    public int groupMembers() {
        try {
            return admin.describeConsumerGroups(List.of(KafkaServices.GROUP)).all().get().get(KafkaServices.GROUP)
                    .members().size();
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException("Could not describe group " + KafkaServices.GROUP, e);
        }
    }

    @Override
    public void close() {
        producer.close();
        admin.close();
    }
}
