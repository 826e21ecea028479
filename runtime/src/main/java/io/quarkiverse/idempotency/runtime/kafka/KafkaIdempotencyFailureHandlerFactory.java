package io.quarkiverse.idempotency.runtime.kafka;

import java.util.HashMap;
import java.util.Map;
import java.util.function.BiConsumer;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;

import io.quarkiverse.idempotency.runtime.ChannelNames;
import io.quarkiverse.idempotency.runtime.DelegateStrategy;
import io.quarkiverse.idempotency.runtime.Deliveries;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.reactive.messaging.kafka.KafkaConnectorIncomingConfiguration;
import io.smallrye.reactive.messaging.kafka.KafkaConsumer;
import io.smallrye.reactive.messaging.kafka.fault.KafkaFailStop;
import io.smallrye.reactive.messaging.kafka.fault.KafkaFailureHandler;
import io.vertx.mutiny.core.Vertx;

/**
 * The Kafka {@code failure-strategy} the build sets as default for every channel consumed by an {@code @Idempotent}
 * method. Busy keys, store failures and failed attempts within the budget never reach it: the method's interceptor
 * retries them in place (see {@code IdempotencyInterceptor}), so the record's offset is not committed past meanwhile.
 * What reaches it is mapped to the channel's dead-letter topic (SmallRye's {@code dead-letter-queue} strategy, its
 * {@code dead-letter-queue.*} attributes) with the reason in headers: a spent attempt budget, a missing key, a payload
 * that could not be converted. A retry that could not happen in place (the application is stopping) stops the
 * channel without committing the record. Any other failure goes to the strategy named by the channel's
 * {@code idempotency.failure-strategy} attribute, else by the connector-wide
 * {@code mp.messaging.connector.smallrye-kafka.failure-strategy}, else {@code dead-letter-queue}.
 */
@ApplicationScoped
@Identifier(KafkaIdempotencyFailureHandlerFactory.NAME)
public class KafkaIdempotencyFailureHandlerFactory implements KafkaFailureHandler.Factory {

    /** The strategy's name, as given to {@code failure-strategy}. */
    public static final String NAME = DelegateStrategy.IDEMPOTENCY;

    /** The connector-wide failure strategy, which the channel-level default set by the build would hide. */
    public static final String CONNECTOR_STRATEGY = "mp.messaging.connector.smallrye-kafka.failure-strategy";

    static final String DEAD_LETTER_QUEUE = KafkaFailureHandler.Strategy.DEAD_LETTER_QUEUE;

    /** The strategy for the failures the extension does not map. */
    static final DelegateStrategy DELEGATE = new DelegateStrategy("failure strategy", DelegateStrategy.ATTRIBUTE,
            CONNECTOR_STRATEGY, "Kafka", DEAD_LETTER_QUEUE,
            "dead-letter-queue, fail, or the @Identifier of a KafkaFailureHandler.Factory bean");

    private final Instance<KafkaFailureHandler.Factory> factories;
    private final Deliveries deliveries;
    private final KafkaDeadLetterReplays replays;

    @Inject
    public KafkaIdempotencyFailureHandlerFactory(@Any Instance<KafkaFailureHandler.Factory> factories,
            Deliveries deliveries, KafkaDeadLetterReplays replays) {
        this.factories = factories;
        this.deliveries = deliveries;
        this.replays = replays;
    }

    @Override
    public KafkaFailureHandler create(KafkaConnectorIncomingConfiguration configuration, Vertx vertx,
            KafkaConsumer<?, ?> consumer, BiConsumer<Throwable, Boolean> reportFailure) {
        // a copy of a channel consumed with concurrency=N is named <channel>$<i>: outcomes belong to <channel>
        String channel = ChannelNames.incoming(configuration.getChannel());
        KafkaFailureHandler deadLetters = DELEGATE.factory(factories, DEAD_LETTER_QUEUE, channel).create(configuration,
                vertx, consumer, reportFailure);
        replays.register(channel, configuration.getDeadLetterQueueTopic()
                .orElse("dead-letter-topic-" + configuration.getChannel()), client(consumer));
        String delegateName = DELEGATE.name(channel, configuration.config());
        KafkaFailureHandler delegate = DEAD_LETTER_QUEUE.equals(delegateName) ? deadLetters
                : DELEGATE.factory(factories, delegateName, channel).create(configuration, vertx, consumer,
                        reportFailure);
        return new KafkaIdempotencyFailureHandler(channel, deadLetters, delegate, new KafkaFailStop(channel,
                reportFailure), deliveries);
    }

    // What reaches the channel's brokers, as its consumer was built: its servers and security (TLS from the registry
    // too), without what names or shapes that consumer
    private static Map<String, Object> client(KafkaConsumer<?, ?> consumer) {
        Map<String, Object> client = new HashMap<>(consumer.configuration());
        client.keySet().removeIf(name -> name.endsWith(".deserializer") || name.endsWith(".serializer")
                || name.equals("interceptor.classes") || name.equals("client.id") || name.equals("group.id")
                || name.equals("group.instance.id"));
        return client;
    }
}
