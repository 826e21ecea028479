package io.quarkiverse.idempotency.deployment;

import java.util.Map;
import java.util.Set;

import io.quarkus.builder.item.SimpleBuildItem;

/**
 * The channels an application sends to through an {@code OutboxEmitter}, each with the payload types its injection
 * points declare.
 */
final class OutboxChannelsBuildItem extends SimpleBuildItem {

    private final Map<String, Set<String>> payloadTypes;

    OutboxChannelsBuildItem(Map<String, Set<String>> payloadTypes) {
        this.payloadTypes = payloadTypes;
    }

    /** @return channel name -> the payload types of its injection points (raw class names) */
    Map<String, Set<String>> payloadTypes() {
        return payloadTypes;
    }

    boolean any() {
        return !payloadTypes.isEmpty();
    }
}
