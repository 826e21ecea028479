package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;

import io.quarkiverse.idempotency.runtime.ChannelNames;
import io.quarkiverse.idempotency.runtime.DelegateStrategy;
import io.quarkiverse.idempotency.runtime.Deliveries;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQConnector;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQConnectorIncomingConfiguration;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQFailureHandler;

/**
 * The RabbitMQ {@code failure-strategy} the build sets as default for every channel consumed by an
 * {@code @Idempotent} method: idempotency outcomes are mapped to the broker (a retry or a busy key: redelivered after
 * its delay; a spent attempt budget, a missing key, an unreadable payload: dead-lettered with the reason), and any
 * other failure goes to the strategy named by the channel's {@code idempotency.failure-strategy} attribute, else by
 * the connector-wide {@code mp.messaging.connector.smallrye-rabbitmq.failure-strategy}, else {@code reject}.
 */
@ApplicationScoped
@Identifier(RabbitMQIdempotencyFailureHandlerFactory.NAME)
public class RabbitMQIdempotencyFailureHandlerFactory implements RabbitMQFailureHandler.Factory {

    /** The strategy's name, as given to {@code failure-strategy}. */
    public static final String NAME = DelegateStrategy.IDEMPOTENCY;

    /** The channel attribute naming the strategy for failures the extension does not map. */
    public static final String DELEGATE_ATTRIBUTE = DelegateStrategy.ATTRIBUTE;

    /** The connector-wide failure strategy, which the channel-level default set by the build would hide. */
    public static final String CONNECTOR_STRATEGY = "mp.messaging.connector.smallrye-rabbitmq.failure-strategy";

    private static final DelegateStrategy DELEGATE = new DelegateStrategy("failure strategy", DELEGATE_ATTRIBUTE,
            CONNECTOR_STRATEGY, "RabbitMQ", "reject",
            "fail, accept, reject, requeue, or the @Identifier of a RabbitMQFailureHandler.Factory bean");

    /** How long a requeued copy or a dead letter waits for the broker's confirm. */
    private static final Duration CONFIRM_TIMEOUT = Duration.ofSeconds(10);

    private final Instance<RabbitMQFailureHandler.Factory> factories;
    private final Deliveries deliveries;
    private final RabbitMQConsumerChannels consumers;
    private final RabbitMQDeadLetterReplays replays;

    @Inject
    public RabbitMQIdempotencyFailureHandlerFactory(@Any Instance<RabbitMQFailureHandler.Factory> factories,
            Deliveries deliveries, RabbitMQConsumerChannels consumers, RabbitMQDeadLetterReplays replays) {
        this.factories = factories;
        this.replays = replays;
        this.deliveries = deliveries;
        this.consumers = consumers;
    }

    @Override
    public RabbitMQFailureHandler create(RabbitMQConnectorIncomingConfiguration configuration,
            RabbitMQConnector connector) {
        // a copy of a channel consumed with concurrency=N is named <channel>$<i>: outcomes belong to <channel>
        String channel = ChannelNames.incoming(configuration.getChannel());
        RabbitMQFailureHandler.Factory delegate = DELEGATE.factory(factories, channel, configuration.config());
        String queue = configuration.getQueueName().orElse(configuration.getChannel());
        boolean quorum = configuration.getQueueXQueueType().map("quorum"::equalsIgnoreCase).orElse(false);
        DeadLetterTarget deadLetters = deadLetterTarget(configuration);
        replays.register(channel, configuration.getChannel(), queue, deadLetters == null ? null
                : configuration.getDeadLetterQueueName().orElse(queue + ".dlq"));
        // a quorum queue's delivery limit counts every requeue; the prefetch bounds the messages waiting to be requeued
        Requeue requeue = new Requeue(channel, queue, quorum, configuration.getMaxOutstandingMessages().orElse(0),
                CONFIRM_TIMEOUT);
        return new RabbitMQIdempotencyFailureHandler(channel, configuration.getChannel(),
                delegate.create(configuration, connector), deliveries, consumers, requeue,
                new DeadLetterPublish(channel, deadLetters, requeue, deliveries::requeueDelay, CONFIRM_TIMEOUT));
    }

    // The exchange and routing key the connector declared the queue with (auto-bind-dlq); without them, dead letters
    // are rejected and the broker's own dead-lettering (a policy, queue arguments) routes them.
    private static DeadLetterTarget deadLetterTarget(RabbitMQConnectorIncomingConfiguration configuration) {
        if (!Boolean.TRUE.equals(configuration.getAutoBindDlq())) {
            return null;
        }
        String queue = configuration.getQueueName().orElse(configuration.getChannel());
        return new DeadLetterTarget(configuration.getDeadLetterExchange(),
                configuration.getDeadLetterRoutingKey().orElse(queue));
    }
}
