package io.quarkiverse.idempotency.deployment;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.quarkus.builder.item.SimpleBuildItem;

/**
 * The channels an application sends to through the outbox: those of its {@code OutboxEmitter} injection points, each
 * with the payload types they declare, and the {@code @Outgoing} channels of its {@code @ThroughOutbox} processors,
 * with the types they return.
 */
final class OutboxChannelsBuildItem extends SimpleBuildItem {

    private final Map<String, Set<String>> payloadTypes;
    private final Set<String> injected;
    private final Set<String> processorOutputs;

    /**
     * @param payloadTypes every outbox channel, with its payload types
     * @param injected the channels with an {@code OutboxEmitter} injection point
     * @param processorOutputs the {@code @Outgoing} channels of {@code @ThroughOutbox} processors
     */
    OutboxChannelsBuildItem(Map<String, Set<String>> payloadTypes, Set<String> injected, Set<String> processorOutputs) {
        this.payloadTypes = payloadTypes;
        this.injected = injected;
        this.processorOutputs = processorOutputs;
    }

    /** @return channel name -> the payload types of its injection points and processors (raw class names) */
    Map<String, Set<String>> payloadTypes() {
        return payloadTypes;
    }

    /**
     * @return the channels that only {@code @ThroughOutbox} processors send to: no injection point makes their
     *         emitter, so the build declares one
     */
    Set<String> processorOnly() {
        Set<String> only = new TreeSet<>(processorOutputs);
        only.removeAll(injected);
        return only;
    }

    /**
     * @return the channels a {@code @ThroughOutbox} processor sends to: two publishers feed each, the processor (which
     *         forwards nothing) and the outbox's emitter
     */
    Set<String> processorOutputs() {
        return processorOutputs;
    }

    /** @return whether the application sends through an outbox at all */
    boolean any() {
        return !payloadTypes.isEmpty();
    }
}
