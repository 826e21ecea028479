package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import io.quarkiverse.idempotency.runtime.DelegateStrategy;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.quarkus.runtime.StartupEvent;

/**
 * Refuses, at startup, RabbitMQ channels of {@code @Idempotent} methods set up so that messages would be lost or loop:
 * a {@code failure-strategy} other than the idempotency strategy (its outcomes would not be mapped: a busy message
 * dead-lettered or acked, a poison message requeued for ever), a fixed {@code consumer-tag} (the extension tells the
 * AMQP channel that delivered a message by its consumer's tag, which a fixed one would carry over to the channel that
 * replaces it after a reconnect), and a queue without a dead-letter exchange (a dead-lettered message would be dropped). Every
 * problem is reported at once, each with the properties to set.
 */
@Singleton
public class RabbitMQChannelCheck {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(RabbitMQChannelCheck.class);

    /** The RabbitMQ connector's name. */
    public static final String CONNECTOR = "smallrye-rabbitmq";

    void check(@Observes StartupEvent event, IdempotentMethods methods, IdempotencyConfig idempotency) {
        Config config = ConfigProvider.getConfig();
        List<String> problems = new ArrayList<>();
        String connectorWide = config
                .getOptionalValue(RabbitMQIdempotencyFailureHandlerFactory.CONNECTOR_STRATEGY, String.class)
                .filter(s -> !RabbitMQIdempotencyFailureHandlerFactory.NAME.equals(s)).orElse(null);
        for (String channel : methods.channelsOf(CONNECTOR)) {
            String prefix = "mp.messaging.incoming." + channel + ".";
            String strategy = DelegateStrategy.otherFailureStrategy(config, channel);
            if (strategy != null) {
                problems.add("Channel " + channel + " has @Idempotent methods but " + prefix + "failure-strategy="
                        + strategy + ", so their outcomes are not mapped to the broker (a busy message would not wait"
                        + " and retry, a poison message would not be dead-lettered after its attempts). Remove that"
                        + " property: handler failures are retried by quarkus.idempotency.retry.*, and " + prefix
                        + RabbitMQIdempotencyFailureHandlerFactory.DELEGATE_ATTRIBUTE + "=" + strategy
                        + " takes the failures the extension does not map");
            }
            if (connectorWide != null
                    && config.getOptionalValue(prefix + RabbitMQIdempotencyFailureHandlerFactory.DELEGATE_ATTRIBUTE,
                            String.class).isEmpty()) {
                LOG.connectorWideStrategyBypassed(RabbitMQIdempotencyFailureHandlerFactory.CONNECTOR_STRATEGY, connectorWide,
                        channel, prefix + RabbitMQIdempotencyFailureHandlerFactory.DELEGATE_ATTRIBUTE);
            }
            Optional<String> consumerTag = attribute(config, channel, "consumer-tag");
            if (consumerTag.isPresent()) {
                problems.add("Channel " + channel + " has @Idempotent methods but " + prefix + "consumer-tag="
                        + consumerTag.get() + ": after a reconnect the new AMQP channel's consumer has the same tag, so"
                        + " a message handled across the reconnect could not be told from the new channel's messages and"
                        + " would be settled on the new channel, under a delivery tag that names another message there."
                        + " Remove that property: the broker then gives each consumer a tag of its own");
            }
            IdempotencyConfig.Channel settings = idempotency.channels().get(channel);
            boolean required = settings == null || settings.requireDeadLetterExchange();
            if (required && !attribute(config, channel, "auto-bind-dlq").map(Boolean::parseBoolean).orElse(false)) {
                problems.add("Channel " + channel + " has @Idempotent methods, whose poison messages, keyless messages"
                        + " and spent retries are dead-lettered, but its queue has no dead-letter exchange: they would"
                        + " be dropped. Set " + prefix + "auto-bind-dlq=true and " + prefix + "dlx.declare=true (the"
                        + " connector then declares the exchange and a queue <queue>.dlq), or, when the"
                        + " broker dead-letters the queue by a policy, quarkus.idempotency.channels.\"" + channel
                        + "\".require-dead-letter-exchange=false");
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalStateException(String.join("\n", problems));
        }
    }

    private static Optional<String> attribute(Config config, String channel, String name) {
        return config.getOptionalValue("mp.messaging.incoming." + channel + "." + name, String.class)
                .or(() -> config.getOptionalValue("mp.messaging.connector." + CONNECTOR + "." + name, String.class));
    }
}
