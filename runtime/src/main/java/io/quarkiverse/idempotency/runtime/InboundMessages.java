package io.quarkiverse.idempotency.runtime;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.reactive.messaging.Message;

import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Multi;
import io.smallrye.reactive.messaging.PublisherDecorator;
import io.smallrye.reactive.messaging.providers.locals.LocalContextMetadata;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * Makes the message being handled reachable from the interceptor of a payload method, which receives only the
 * payload: each message of a channel with {@code @Idempotent} methods is put into its own Vert.x duplicated context,
 * which the method then runs on.
 */
// No qualifier: the channel factory looks decorators up with the @Default qualifier.
@ApplicationScoped
public class InboundMessages implements PublisherDecorator {

    private static final Object LOCAL_KEY = InboundMessage.class;

    private final IdempotentMethods methods;

    @Inject
    public InboundMessages(IdempotentMethods methods) {
        this.methods = methods;
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

    @Override
    public Multi<? extends Message<?>> decorate(Multi<? extends Message<?>> publisher, List<String> channelNames,
            boolean isConnector) {
        if (!isConnector) {
            return publisher;
        }
        String channel = null;
        for (String name : channelNames) {
            if (methods.channels().contains(name)) {
                channel = name;
                break;
            }
        }
        if (channel == null) {
            return publisher;
        }
        String idempotentChannel = channel;
        return publisher.invoke(message -> remember(idempotentChannel, message));
    }

    private static void remember(String channel, Message<?> message) {
        for (Object metadata : message.getMetadata()) {
            if (metadata instanceof LocalContextMetadata local) {
                Context context = local.context();
                if (VertxContext.isDuplicatedContext(context)) {
                    context.putLocal(LOCAL_KEY, new InboundMessage(channel, message));
                }
                return;
            }
        }
    }

    @Override
    public int getPriority() {
        // After the connector's own decorators, which attach the message context.
        return 1000;
    }
}
