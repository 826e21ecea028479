package io.quarkiverse.idempotency.deployment;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.quarkus.smallrye.reactivemessaging.deployment.items.ChannelBuildItem;
import io.quarkus.smallrye.reactivemessaging.deployment.items.ChannelDirection;

/**
 * The incoming channels of one connector that {@code @Idempotent} methods consume, for a connector's processor.
 */
final class ConnectorChannels {

    private ConnectorChannels() {
    }

    /** @return the names of the channels of {@code connector} consumed by an {@code @Idempotent} method */
    static Set<String> of(String connector, IdempotentMethodsBuildItem methods, List<ChannelBuildItem> channels) {
        Set<String> idempotent = new HashSet<>();
        for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
            idempotent.addAll(entry.info().getChannels());
        }
        Set<String> found = new HashSet<>();
        for (ChannelBuildItem channel : channels) {
            if (channel.getDirection() == ChannelDirection.INCOMING && idempotent.contains(channel.getName())
                    && connector.equals(channel.getConnector())) {
                found.add(channel.getName());
            }
        }
        return found;
    }
}
