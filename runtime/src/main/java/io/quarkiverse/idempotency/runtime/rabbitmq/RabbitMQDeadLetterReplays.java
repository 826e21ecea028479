package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;

import io.quarkiverse.idempotency.DeadLetterReplay;
import io.quarkiverse.idempotency.DeadLetterReplays;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.ConnectorReplays;
import io.quarkiverse.idempotency.runtime.DeadLetterHeaders;
import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.quarkiverse.idempotency.runtime.ReplaySelection;
import io.quarkiverse.idempotency.runtime.StoreDeadLetters;

/**
 * Replays the dead letters of a RabbitMQ channel whose dead-letter queue the connector declared ({@code auto-bind-dlq}):
 * on a channel of its own on the consumer's connection, it takes the dead-letter queue's messages one by one
 * ({@code basic.get}, unacknowledged), and for each that matches: releases its key (named by its
 * {@value DeadLetterHeaders#KEY} header), publishes a copy to the channel's queue through the default exchange with
 * publisher confirms (the dead-letter headers removed), then acknowledges it. The messages it leaves are rejected back
 * to the dead-letter queue at the end, in their order. A crash at any point loses nothing: an unacknowledged message
 * goes back to the dead-letter queue, and a copy published before it is a duplicate its key drops.
 */
@Singleton
public class RabbitMQDeadLetterReplays implements ConnectorReplays {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(RabbitMQDeadLetterReplays.class);
    private static final Duration CONFIRM_TIMEOUT = Duration.ofSeconds(10);
    /** How many copies share one wait for the broker's confirms. */
    private static final int BATCH = 100;

    private final RabbitMQConsumerChannels consumers;
    private final StoreDeadLetters deadLetters;
    private final IdempotentMethods methods;
    private final Map<String, Source> sources = new ConcurrentHashMap<>();

    @Inject
    public RabbitMQDeadLetterReplays(RabbitMQConsumerChannels consumers, StoreDeadLetters deadLetters,
            IdempotentMethods methods) {
        this.consumers = consumers;
        this.deadLetters = deadLetters;
        this.methods = methods;
    }

    /**
     * Where a channel's dead letters are, as its failure handler found it.
     *
     * @param connectorChannel the channel as the connector names it ({@code <channel>$<i>} for a copy)
     * @param deadLetterQueue the dead-letter queue, or {@code null} when the broker dead-letters the queue itself
     */
    void register(String channel, String connectorChannel, String queue, String deadLetterQueue) {
        sources.computeIfAbsent(channel, c -> new Source(queue, deadLetterQueue, new CopyOnWriteArrayList<>()))
                .connectorChannels().add(connectorChannel);
    }

    @Override
    public boolean replays(String channel) {
        return sources.containsKey(channel);
    }

    @Override
    public DeadLetterReplay replay(String channel, String reason, int limit) {
        Source source = source(channel);
        RabbitMQConsumerChannels.Tracker tracker = tracker(channel, source);
        ReplaySelection selection = ReplaySelection.of(channel, reason, methods);
        Channel amqp;
        try {
            amqp = tracker.openChannel();
        } catch (IOException e) {
            throw new IllegalStateException("Channel " + channel + ": could not reach RabbitMQ to replay: " + e, e);
        }
        try {
            return new Run(selection, source, tracker, amqp).replay(limit);
        } finally {
            try {
                if (amqp.isOpen()) {
                    amqp.close(); // rejects whatever is still unacknowledged back to the dead-letter queue
                }
            } catch (IOException | TimeoutException e) {
                // closed with its connection: the broker requeued the unacknowledged messages already
            }
        }
    }

    private Source source(String channel) {
        Source source = sources.get(channel);
        if (source.deadLetterQueue() == null) {
            throw new UnsupportedOperationException("Channel " + channel + ": the broker dead-letters queue "
                    + source.queue() + " itself (a policy or queue arguments), and its dead letters do not say why:"
                    + " move them with RabbitMQ's shovel after releasing their keys, or set auto-bind-dlq=true on the"
                    + " channel");
        }
        return source;
    }

    private RabbitMQConsumerChannels.Tracker tracker(String channel, Source source) {
        for (String connectorChannel : source.connectorChannels()) {
            RabbitMQConsumerChannels.Tracker tracker = consumers.of(connectorChannel);
            if (tracker != null && tracker.connected()) {
                return tracker;
            }
        }
        throw new IllegalStateException("Channel " + channel + " has no open connection to RabbitMQ to replay through"
                + " (its client is not connected, or is built from options of the application's own)");
    }

    /** One replay: its AMQP channel, and what it did. */
    private final class Run {

        private final String channel;
        private final ReplaySelection selection;
        private final Source source;
        private final RabbitMQConsumerChannels.Tracker tracker;
        private final Channel amqp;
        private final List<Long> left = new ArrayList<>();
        private int replayed;
        private int released;

        Run(ReplaySelection selection, Source source, RabbitMQConsumerChannels.Tracker tracker, Channel amqp) {
            this.channel = selection.channel();
            this.selection = selection;
            this.source = source;
            this.tracker = tracker;
            this.amqp = amqp;
        }

        DeadLetterReplay replay(int limit) {
            try {
                long waiting = amqp.queueDeclarePassive(source.deadLetterQueue()).getMessageCount();
                long examine = Math.min(waiting, DeadLetterReplays.MAX_EXAMINED);
                List<GetResponse> batch = new ArrayList<>();
                for (long i = 0; i < examine && replayed + batch.size() < limit; i++) {
                    GetResponse message = amqp.basicGet(source.deadLetterQueue(), false);
                    if (message == null) {
                        break;
                    }
                    if (matches(message)) {
                        batch.add(message);
                        if (batch.size() == BATCH) {
                            move(batch);
                        }
                    } else {
                        left.add(message.getEnvelope().getDeliveryTag());
                    }
                }
                move(batch);
                for (long tag : left) {
                    amqp.basicNack(tag, false, true);
                }
                // not counted again: the broker takes the rejected messages back asynchronously
                long after = waiting - replayed;
                LOG.replayed(channel, replayed, source.deadLetterQueue(), released, left.size(), after);
                return new DeadLetterReplay(channel, replayed, released, left.size(), after);
            } catch (IOException | TimeoutException | ShutdownSignalException e) {
                throw failed(e); // ShutdownSignalException: the channel or its connection closed (AlreadyClosed too)
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw failed(e);
            }
        }

        // A dead letter without a key it names whole (unreadable, key missing, a key cut in its header) is left: its
        // copy would be dead-lettered again at once, its key not released
        private boolean matches(GetResponse message) {
            Map<String, Object> headers = message.getProps().getHeaders();
            return headers != null && selection.matches(name -> text(headers.get(name)))
                    && selection.key(name -> text(headers.get(name))) != null;
        }

        // Release the keys, publish the copies and wait for the broker's confirms, then acknowledge the dead letters:
        // in this order, so that a crash in between loses nothing. A batch shares one wait for its confirms.
        private void move(List<GetResponse> batch) throws IOException, InterruptedException, TimeoutException {
            if (batch.isEmpty()) {
                return;
            }
            List<RabbitMQConsumerChannels.Copy> copies = new ArrayList<>(batch.size());
            for (GetResponse message : batch) {
                Map<String, Object> headers = message.getProps().getHeaders();
                ScopedKey key = selection.key(name -> text(headers.get(name)));
                if (key != null && deadLetters.releaseForReplay(key.scope(), key.key())) {
                    released++;
                }
                copies.add(new RabbitMQConsumerChannels.Copy(replayed(message.getProps()), message.getBody()));
            }
            tracker.publishConfirmed("", source.queue(), copies, CONFIRM_TIMEOUT);
            for (GetResponse message : batch) {
                amqp.basicAck(message.getEnvelope().getDeliveryTag(), false);
            }
            replayed += batch.size();
            batch.clear();
        }

        private IllegalStateException failed(Exception e) {
            return new IllegalStateException("Channel " + channel + ": the replay from " + source.deadLetterQueue()
                    + " stopped after " + replayed + " messages (" + e + "); the others stay in the dead-letter queue,"
                    + " and a message copied but not yet removed is dropped as a duplicate when it is replayed again",
                    e);
        }
    }

    /** The copy's properties: the message's own, without the headers that said why and how it was dead-lettered. */
    static AMQP.BasicProperties replayed(AMQP.BasicProperties properties) {
        Map<String, Object> headers = new HashMap<>(properties.getHeaders() == null ? Map.of() : properties.getHeaders());
        headers.keySet().removeIf(ReplaySelection::deadLetterHeader);
        return properties.builder().headers(headers).build();
    }

    private static String text(Object value) {
        return value == null ? null : value.toString();
    }

    private record Source(String queue, String deadLetterQueue, List<String> connectorChannels) {
    }
}
