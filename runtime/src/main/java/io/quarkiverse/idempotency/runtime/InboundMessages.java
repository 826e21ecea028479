package io.quarkiverse.idempotency.runtime;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.reactive.messaging.Message;

import io.quarkus.arc.All;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Multi;
import io.smallrye.reactive.messaging.PublisherDecorator;
import io.smallrye.reactive.messaging.providers.locals.LocalContextMetadata;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * Makes the message being handled reachable from the interceptor of a payload method, which receives only the
 * payload, and from the connector's failure handler: each message of a channel with {@code @Idempotent} methods is
 * put into its own Vert.x duplicated context, which the method then runs on. On a channel consumed by a processor
 * ({@code @Incoming} and {@code @Outgoing}), the message's acknowledgement is observed too: SmallRye acknowledges the
 * input once the output is acknowledged downstream, and only then is the key confirmed.
 */
// No qualifier: the channel factory looks decorators up with the @Default qualifier.
@ApplicationScoped
public class InboundMessages implements PublisherDecorator {

    private static final Object LOCAL_KEY = InboundMessage.class;

    private final IdempotentMethods methods;
    private final List<ConnectorSupport> connectors;

    @Inject
    public InboundMessages(IdempotentMethods methods, @All List<ConnectorSupport> connectors) {
        this.methods = methods;
        this.connectors = List.copyOf(connectors);
    }

    /**
     * @return the message being handled on this thread's duplicated context, or {@code null} when there is none
     */
    public static InboundMessage current() {
        Context context = Vertx.currentContext();
        if (context == null || !VertxContext.isDuplicatedContext(context)) {
            return null;
        }
        return context.getLocal(LOCAL_KEY);
    }

    /**
     * @return the inbound message a connector message was put in, found through its local context metadata, or
     *         {@code null}
     */
    public static InboundMessage of(Message<?> message) {
        return message.getMetadata(LocalContextMetadata.class)
                .map(local -> VertxContext.isDuplicatedContext(local.context())
                        ? local.context().<InboundMessage> getLocal(LOCAL_KEY)
                        : null)
                .orElse(null);
    }

    @Override
    public Multi<? extends Message<?>> decorate(Multi<? extends Message<?>> publisher, List<String> channelNames,
            boolean isConnector) {
        if (!isConnector) {
            return publisher;
        }
        String channel = null;
        for (String name : channelNames) {
            channel = ChannelNames.incoming(name, methods.channels());
            if (channel != null) {
                break;
            }
        }
        if (channel == null) {
            return publisher;
        }
        String idempotentChannel = channel;
        if (methods.processorChannels().contains(channel)) {
            return publisher.map(message -> observeAcknowledgement(remember(idempotentChannel, message), message));
        }
        return publisher.invoke(message -> remember(idempotentChannel, message));
    }

    private InboundMessage remember(String channel, Message<?> message) {
        for (Object metadata : message.getMetadata()) {
            if (metadata instanceof LocalContextMetadata local) {
                Context context = local.context();
                if (VertxContext.isDuplicatedContext(context)) {
                    InboundMessage inbound = new InboundMessage(channel, message, connectors);
                    context.putLocal(LOCAL_KEY, inbound);
                    return inbound;
                }
                return null;
            }
        }
        return null;
    }

    // The processor's output carries its input's ack and nack: acking the output downstream acks this message, which
    // confirms the key first; a nack counts the attempt and hands the broker the delivery's outcome.
    private static Message<?> observeAcknowledgement(InboundMessage inbound, Message<?> message) {
        return inbound == null ? message : SettlementObserver.observe(message, inbound::delivery, inbound::settle);
    }

    @Override
    public int getPriority() {
        // After the connector's own decorators, which attach the message context.
        return 1000;
    }
}
