package io.quarkiverse.idempotency.deployment;

import io.quarkiverse.idempotency.runtime.Redelivery;
import io.quarkus.builder.item.MultiBuildItem;

/**
 * A connector whose channels {@code @Idempotent} methods may consume: its failure handling maps the extension's
 * outcomes. Produced by each connector's processor (RabbitMQ, Kafka, the in-memory connector); consumed by
 * {@link IdempotencyProcessor}, which refuses channels of any other connector and records how each channel's
 * retries come back.
 */
public final class IdempotentConnectorBuildItem extends MultiBuildItem {

    private final String name;
    private final Redelivery redelivery;

    /**
     * @param name the connector's name, as in {@code mp.messaging.incoming.<channel>.connector}
     * @param redelivery how a delivery to try again later comes back on its channels
     */
    public IdempotentConnectorBuildItem(String name, Redelivery redelivery) {
        this.name = name;
        this.redelivery = redelivery;
    }

    /** @return the connector's name */
    public String name() {
        return name;
    }

    /** @return how a delivery to try again later comes back */
    public Redelivery redelivery() {
        return redelivery;
    }
}
