package io.quarkiverse.idempotency.runtime.rabbitmq;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;

import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQConnector;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQConnectorIncomingConfiguration;
import io.smallrye.reactive.messaging.rabbitmq.fault.RabbitMQFailureHandler;

/**
 * The RabbitMQ {@code failure-strategy} the build sets as default for every channel consumed by an
 * {@code @Idempotent} method: idempotency outcomes are mapped to the broker (key missing: reject without requeue, so
 * the message is dead-lettered; delivery in progress elsewhere, store failure, lost claim: requeue after
 * {@code quarkus.idempotency.retry-delay}), and every other failure goes to the strategy named by the channel's
 * {@code idempotency.failure-strategy} attribute ({@code reject} when unset, as the connector's own default).
 */
@ApplicationScoped
@Identifier(IdempotencyFailureHandlerFactory.NAME)
public class IdempotencyFailureHandlerFactory implements RabbitMQFailureHandler.Factory {

    /** The strategy's name, as given to {@code failure-strategy}. */
    public static final String NAME = "idempotency";

    /** The channel attribute naming the strategy for handler failures. */
    public static final String DELEGATE_ATTRIBUTE = "idempotency.failure-strategy";

    private final Instance<RabbitMQFailureHandler.Factory> factories;
    private final IdempotencyConfig config;

    @Inject
    public IdempotencyFailureHandlerFactory(@Any Instance<RabbitMQFailureHandler.Factory> factories,
            IdempotencyConfig config) {
        this.factories = factories;
        this.config = config;
    }

    @Override
    public RabbitMQFailureHandler create(RabbitMQConnectorIncomingConfiguration configuration,
            RabbitMQConnector connector) {
        String channel = configuration.getChannel();
        String delegateName = configuration.config().getOptionalValue(DELEGATE_ATTRIBUTE, String.class)
                .orElse("reject");
        if (NAME.equals(delegateName)) {
            throw new IllegalArgumentException("mp.messaging.incoming." + channel + "." + DELEGATE_ATTRIBUTE
                    + " names the idempotency strategy itself; name the strategy for handler failures instead"
                    + " (fail, accept, reject, requeue, or the @Identifier of a RabbitMQFailureHandler.Factory bean)");
        }
        Instance<RabbitMQFailureHandler.Factory> delegate = factories.select(Identifier.Literal.of(delegateName));
        if (!delegate.isResolvable()) {
            throw new IllegalArgumentException("mp.messaging.incoming." + channel + "." + DELEGATE_ATTRIBUTE + "="
                    + delegateName + " names no RabbitMQ failure strategy; use fail, accept, reject, requeue, or the"
                    + " @Identifier of a RabbitMQFailureHandler.Factory bean");
        }
        return new IdempotencyFailureHandler(channel, delegate.get().create(configuration, connector),
                config.retryDelay());
    }
}
