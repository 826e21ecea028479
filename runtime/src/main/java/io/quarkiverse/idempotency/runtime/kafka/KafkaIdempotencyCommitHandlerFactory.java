package io.quarkiverse.idempotency.runtime.kafka;

import java.util.Map;
import java.util.function.BiConsumer;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;

import org.apache.kafka.clients.consumer.ConsumerConfig;

import io.quarkiverse.idempotency.runtime.ChannelNames;
import io.quarkiverse.idempotency.runtime.DelegateStrategy;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.reactive.messaging.kafka.KafkaConnectorIncomingConfiguration;
import io.smallrye.reactive.messaging.kafka.KafkaConsumer;
import io.smallrye.reactive.messaging.kafka.commit.KafkaCommitHandler;
import io.smallrye.reactive.messaging.kafka.impl.KafkaAdminHelper;
import io.vertx.mutiny.core.Vertx;

/**
 * The Kafka {@code commit-strategy} the build sets as default for every channel consumed by an {@code @Idempotent}
 * method ({@link KafkaIdempotencyCommitHandler}). The committing itself is done by the strategy named by the channel's
 * {@code idempotency.commit-strategy} attribute, else by the connector-wide
 * {@code mp.messaging.connector.smallrye-kafka.commit-strategy}, else {@code throttled}.
 */
@ApplicationScoped
@Identifier(KafkaIdempotencyCommitHandlerFactory.NAME)
public class KafkaIdempotencyCommitHandlerFactory implements KafkaCommitHandler.Factory {

    /** The strategy's name, as given to {@code commit-strategy}. */
    public static final String NAME = DelegateStrategy.IDEMPOTENCY;

    /** The channel attribute naming the strategy that commits. */
    public static final String DELEGATE_ATTRIBUTE = "idempotency.commit-strategy";

    /** The connector-wide commit strategy, which the channel-level default set by the build would hide. */
    public static final String CONNECTOR_STRATEGY = "mp.messaging.connector.smallrye-kafka.commit-strategy";

    private static final DelegateStrategy DELEGATE = new DelegateStrategy("commit strategy", DELEGATE_ATTRIBUTE,
            CONNECTOR_STRATEGY, "Kafka", KafkaCommitHandler.Strategy.THROTTLED,
            "throttled, latest, or the @Identifier of a KafkaCommitHandler.Factory bean");

    private final Instance<KafkaCommitHandler.Factory> factories;
    private final IdempotentMethods methods;
    private final KafkaMessageIdReader ids;

    @Inject
    public KafkaIdempotencyCommitHandlerFactory(@Any Instance<KafkaCommitHandler.Factory> factories,
            IdempotentMethods methods, KafkaMessageIdReader ids) {
        this.factories = factories;
        this.methods = methods;
        this.ids = ids;
    }

    @Override
    public KafkaCommitHandler create(KafkaConnectorIncomingConfiguration configuration, Vertx vertx,
            KafkaConsumer<?, ?> consumer, BiConsumer<Throwable, Boolean> reportFailure) {
        String channel = ChannelNames.incoming(configuration.getChannel());
        KafkaCommitHandler delegate = DELEGATE.factory(factories, channel, configuration.config())
                .create(configuration, vertx, consumer, reportFailure);
        int timeout = configuration.config().getOptionalValue(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                Integer.class).orElse(60_000);
        @SuppressWarnings("unchecked")
        Map<String, Object> consumerConfig = (Map<String, Object>) consumer.configuration();
        KafkaAssignments assignments = new KafkaAssignments(channel,
                () -> KafkaAdminHelper.createAdminClient(consumerConfig, configuration.getChannel(), true),
                methods.keyedByMessageId(channel) ? ids : null);
        return new KafkaIdempotencyCommitHandler(vertx, timeout, delegate, assignments);
    }
}
