package io.quarkiverse.idempotency.runtime.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.DeadLetterReplay;
import io.quarkiverse.idempotency.DeadLetterReplays;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.ConnectorReplays;
import io.quarkiverse.idempotency.runtime.DeadLetterHeaders;
import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.quarkiverse.idempotency.runtime.ReplaySelection;
import io.quarkiverse.idempotency.runtime.StoreDeadLetters;

/**
 * Replays the dead letters of a Kafka channel from its dead-letter topic, which keeps every record: it reads the topic
 * from its beginning to where it ended when the replay started, and for each record that matches and whose key is not
 * handled yet (looked up in the store), releases the key and produces a copy to the record's topic
 * ({@code dead-letter-topic}), with its key, value and headers but the dead-letter ones, and waits for the brokers'
 * acknowledgement ({@code acks=all}, idempotent producer). The key's state is the replay's bookmark: a record whose key
 * is handled is skipped, so a replay stopped half-way and run again copies only what is still to do, and a copy made
 * twice is dropped as a duplicate. Three things keep that bookmark true:
 * <ul>
 * <li>a record keyed by its position (no {@code ce_id}, no id header) gets that position as its id on the copy
 * ({@code ce_id}, or the configured id header), as the copy's own position would be a new key; one whose key is not
 * its position (a digest, or the key of another method of the channel) is not replayed;</li>
 * <li>a record dead-lettered longer ago than the channel's retention, whose key the store no longer knows, is not
 * copied: the store forgot whether an earlier replay's copy was handled;</li>
 * <li>a key is copied once per replay, however many of its dead letters the topic holds.</li>
 * </ul>
 * A record without a key (a payload that could not be read) is not replayed.
 */
@Singleton
public class KafkaDeadLetterReplays implements ConnectorReplays {

    /** The record header SmallRye's dead-letter strategy names the record's topic with. */
    static final String TOPIC_HEADER = "dead-letter-topic";

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(KafkaDeadLetterReplays.class);
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Duration POLL = Duration.ofMillis(500);

    private final StoreDeadLetters deadLetters;
    private final IdempotencyStore store;
    private final IdempotentMethods methods;
    private final KafkaMessageIdReader ids;
    private final Map<String, Source> sources = new ConcurrentHashMap<>();

    @Inject
    public KafkaDeadLetterReplays(StoreDeadLetters deadLetters, IdempotencyStore store, IdempotentMethods methods,
            KafkaMessageIdReader ids) {
        this.deadLetters = deadLetters;
        this.store = store;
        this.methods = methods;
        this.ids = ids;
    }

    /**
     * Where a channel's dead letters are, as its failure handler found it.
     *
     * @param client the Kafka client settings of the channel's consumer (servers, security), without its
     *        deserializers, interceptors and ids
     */
    void register(String channel, String topic, Map<String, Object> client) {
        sources.putIfAbsent(channel, new Source(topic, Collections.unmodifiableMap(new HashMap<>(client))));
    }

    @Override
    public boolean replays(String channel) {
        return sources.containsKey(channel);
    }

    @Override
    public DeadLetterReplay replay(String channel, String reason, int limit) {
        if (!store.peeks()) {
            throw new UnsupportedOperationException("Channel " + channel + ": a replay from a Kafka dead-letter topic"
                    + " looks up which keys are handled, and " + store.getClass().getName() + " cannot look keys up");
        }
        Source source = sources.get(channel);
        ReplaySelection selection = ReplaySelection.of(channel, reason, methods);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(source.consumer(channel),
                new ByteArrayDeserializer(), new ByteArrayDeserializer());
                KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(source.producer(channel),
                        new ByteArraySerializer(), new ByteArraySerializer())) {
            Run run = new Run(selection, methods.keyedByMessageId(channel), consumer, producer);
            run.replay(source.topic(), limit);
            run.forgotten.removeAll(run.copied); // a younger dead letter of the key was copied
            if (!run.forgotten.isEmpty()) {
                LOG.replayForgotten(channel, run.forgotten.size(), source.topic(), selection.retention());
            }
            LOG.replayed(channel, run.replayed, source.topic(), run.released, run.skipped, run.left);
            return new DeadLetterReplay(channel, run.replayed, run.released, run.skipped, run.left);
        } catch (KafkaException | ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Channel " + channel + ": the replay from " + source.topic() + " stopped ("
                    + e + "); run it again: it copies only the records whose keys are not handled yet", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Channel " + channel + ": the replay was interrupted", e);
        }
    }

    /** One replay: its clients, and what it did. */
    private final class Run {

        private final ReplaySelection selection;
        private final boolean keyedByMessageId;
        private final KafkaConsumer<byte[], byte[]> consumer;
        private final KafkaProducer<byte[], byte[]> producer;
        private final Instant remembered;
        private final Set<ScopedKey> copied = new HashSet<>();
        private final Set<ScopedKey> forgotten = new HashSet<>();
        private int replayed;
        private int released;
        private int skipped;
        private long examined;
        private long left;

        Run(ReplaySelection selection, boolean keyedByMessageId, KafkaConsumer<byte[], byte[]> consumer,
                KafkaProducer<byte[], byte[]> producer) {
            this.selection = selection;
            this.keyedByMessageId = keyedByMessageId;
            this.consumer = consumer;
            this.producer = producer;
            this.remembered = Instant.now().minus(selection.retention());
        }

        void replay(String topic, int limit) throws ExecutionException, InterruptedException, TimeoutException {
            List<PartitionInfo> partitions = consumer.partitionsFor(topic, TIMEOUT);
            if (partitions == null || partitions.isEmpty()) {
                return; // nothing was dead-lettered yet
            }
            List<TopicPartition> assigned = new ArrayList<>();
            partitions.forEach(p -> assigned.add(new TopicPartition(topic, p.partition())));
            consumer.assign(assigned);
            Map<TopicPartition, Long> end = consumer.endOffsets(assigned, TIMEOUT);
            consumer.seekToBeginning(assigned);
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            while (!reachedEnd(assigned, end) && examined < DeadLetterReplays.MAX_EXAMINED && replayed < limit) {
                if (System.nanoTime() > deadline) {
                    throw new TimeoutException("the dead-letter topic could not be read to its end within 5 minutes");
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                    TopicPartition partition = new TopicPartition(record.topic(), record.partition());
                    if (record.offset() >= end.get(partition)) {
                        continue; // dead-lettered after the replay started
                    }
                    if (examined < DeadLetterReplays.MAX_EXAMINED && replayed < limit) {
                        consider(record);
                    } else {
                        left++;
                    }
                }
            }
        }

        private boolean reachedEnd(List<TopicPartition> assigned, Map<TopicPartition, Long> end) {
            for (TopicPartition partition : assigned) {
                if (consumer.position(partition, TIMEOUT) < end.get(partition)) {
                    return false;
                }
            }
            return true;
        }

        // Only the records that may be copied count against MAX_EXAMINED: the records of keys handled (by an earlier
        // replay too) would otherwise hide the newer dead letters of a topic that keeps many.
        private void consider(ConsumerRecord<byte[], byte[]> record)
                throws ExecutionException, InterruptedException, TimeoutException {
            Headers headers = record.headers();
            String topic = text(headers, TOPIC_HEADER);
            if (!selection.matches(name -> text(headers, name))) {
                skipped++; // another reason's, or another channel's
                left++;
                return;
            }
            ScopedKey key = selection.key(name -> text(headers, name));
            if (key == null || topic == null) {
                examined++;
                skipped++;
                left++;
                return;
            }
            if (copied.contains(key)) {
                return; // an older dead letter of a key this replay copied already
            }
            boolean byPosition = keyedByMessageId && ids.explicitId(headers) == null;
            if (byPosition && !position(key.key(), headers)) {
                // keyed by its position, but the key is not that position (a digest under key-storage=digest, or the
                // key of another method of the channel): the copy, at another offset, could not be given its key
                examined++;
                skipped++;
                left++;
                return;
            }
            ClaimResult state = store.peek(key).result();
            if (state == ClaimResult.DONE || state == ClaimResult.BUSY) {
                return; // handled (replayed before, or delivered again by other means), or being handled
            }
            examined++;
            if (state != ClaimResult.DEAD_LETTERED && deadLetteredAt(record).isBefore(remembered)) {
                forgotten.add(key); // the store forgot the key: an earlier replay's copy may have been handled
                skipped++;
                left++;
                return;
            }
            // release, produce and wait for the acknowledgement: a crash in between leaves the key unhandled, and the
            // next replay copies the record again
            if (state == ClaimResult.DEAD_LETTERED && deadLetters.releaseForReplay(key.scope(), key.key())) {
                released++;
            }
            producer.send(new ProducerRecord<>(topic, null, record.key(), record.value(),
                    copied(headers, byPosition ? key.key() : null)))
                    .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            copied.add(key);
            replayed++;
        }

        // The record's headers but the dead-letter ones. A record keyed by its position (topic, partition, offset)
        // carries that position as its id, which the copy's own position would not be.
        private Headers copied(Headers headers, String position) {
            RecordHeaders copy = new RecordHeaders();
            for (Header header : headers) {
                if (!ReplaySelection.deadLetterHeader(header.key())) {
                    copy.add(header);
                }
            }
            if (position != null) {
                copy.add(ids.idHeader() != null ? ids.idHeader() : KafkaMessageIdReader.CE_ID,
                        position.getBytes(StandardCharsets.UTF_8));
            }
            return copy;
        }

        // Whether a key is the record's position, read from the headers SmallRye's dead-letter strategy gives it
        private static boolean position(String key, Headers headers) {
            String topic = text(headers, TOPIC_HEADER);
            String partition = text(headers, "dead-letter-partition");
            String offset = text(headers, "dead-letter-offset");
            return topic != null && partition != null && offset != null
                    && KafkaMessageIdReader.isPosition(key, topic, partition, offset);
        }

        private static Instant deadLetteredAt(ConsumerRecord<byte[], byte[]> record) {
            String at = text(record.headers(), DeadLetterHeaders.DEAD_LETTERED_AT);
            try {
                return at != null ? Instant.parse(at) : Instant.ofEpochMilli(record.timestamp());
            } catch (DateTimeParseException e) {
                return Instant.ofEpochMilli(record.timestamp());
            }
        }
    }

    private static String text(Headers headers, String name) {
        Header header = headers.lastHeader(name);
        return header == null || header.value() == null || header.value().length == 0 ? null
                : new String(header.value(), StandardCharsets.UTF_8);
    }

    private record Source(String topic, Map<String, Object> client) {

        Map<String, Object> consumer(String channel) {
            Map<String, Object> config = new HashMap<>(client);
            config.put(ConsumerConfig.CLIENT_ID_CONFIG, "idempotency-replay-" + channel);
            config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500");
            return config;
        }

        // The consumer's settings whole (TLS from Quarkus's registry needs its tls-configuration-name, and config
        // providers their config.providers.*): the producer logs those it does not know, once a replay
        Map<String, Object> producer(String channel) {
            Map<String, Object> config = new HashMap<>(client);
            config.put(ProducerConfig.CLIENT_ID_CONFIG, "idempotency-replay-producer-" + channel);
            config.put(ProducerConfig.ACKS_CONFIG, "all");
            config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            return config;
        }
    }
}
