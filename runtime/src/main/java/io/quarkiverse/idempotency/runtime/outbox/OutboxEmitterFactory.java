package io.quarkiverse.idempotency.runtime.outbox;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.enterprise.inject.Typed;
import jakarta.enterprise.inject.spi.InjectionPoint;
import jakarta.inject.Inject;

import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;

import io.quarkiverse.idempotency.OutboxEmitter;
import io.smallrye.reactive.messaging.ChannelRegistry;
import io.smallrye.reactive.messaging.EmitterConfiguration;
import io.smallrye.reactive.messaging.EmitterFactory;
import io.smallrye.reactive.messaging.annotations.EmitterFactoryFor;
import io.smallrye.reactive.messaging.providers.extension.ChannelProducer;

/**
 * Makes {@code @Channel("name") OutboxEmitter<T>} an emitter type of SmallRye Reactive Messaging: the channel is wired
 * to its connector as an emitter's is, and the injected emitter is the channel's outbox.
 */
@EmitterFactoryFor(OutboxEmitter.class)
@ApplicationScoped
public class OutboxEmitterFactory implements EmitterFactory<ChannelOutbox<Object>> {

    @Inject
    ChannelRegistry channels;

    @Inject
    Outbox outbox;

    /**
     * Messages of committed transactions wait here for the connector when it is slower than the commits: each is in
     * the table too, so one that finds the buffer full is left to the relay, not lost.
     */
    public static final long BUFFER = 16_384;

    @Override
    public ChannelOutbox<Object> createEmitter(EmitterConfiguration configuration, long defaultBufferSize) {
        // always a buffer: a strategy that drops a message would leave its row waiting a whole lease
        long size = Math.max(BUFFER, Math.max(defaultBufferSize, configuration.overflowBufferSize()));
        ChannelOutbox<Object> channel = new ChannelOutbox<>(new Buffered(configuration, size), size, outbox);
        outbox.register(channel);
        return channel;
    }

    /** The channel's configuration with a buffer of at least {@link #BUFFER} messages, whatever its overflow. */
    private record Buffered(String name, EmitterFactoryFor emitterType, OnOverflow.Strategy overflowBufferStrategy,
            long overflowBufferSize, boolean broadcast, int numberOfSubscriberBeforeConnecting)
            implements
                EmitterConfiguration {

        Buffered(EmitterConfiguration configuration, long size) {
            this(configuration.name(), configuration.emitterType(), OnOverflow.Strategy.BUFFER, size,
                    configuration.broadcast(), configuration.numberOfSubscriberBeforeConnecting());
        }
    }

    @Produces
    @Typed(OutboxEmitter.class)
    @Channel("") // the name is read from the injection point
    <T> OutboxEmitter<T> outboxEmitter(InjectionPoint injectionPoint) {
        return channels.getEmitter(ChannelProducer.getChannelName(injectionPoint), OutboxEmitter.class);
    }
}
