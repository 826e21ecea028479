package io.quarkiverse.idempotency.runtime.rabbitmq;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.Config;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.MetricsCollector;

import io.quarkiverse.idempotency.runtime.ChannelNames;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.smallrye.reactive.messaging.ClientCustomizer;
import io.vertx.rabbitmq.RabbitMQOptions;

/**
 * What the RabbitMQ client of a channel consumed by {@code @Idempotent} methods does not expose: the AMQP channel each
 * message was delivered on, and its connection. Learnt through the client's {@link MetricsCollector}, which the
 * connector's clients take from their options: this customizer wraps the one they have (if any) for those channels.
 * <p>
 * With them, a message is acknowledged or rejected on the very AMQP channel that delivered it (after a reconnect that
 * channel is closed, and the broker has requeued the message already: nothing can hit another message with a stale
 * delivery tag), and messages are published with publisher confirms on a channel of their own on the same connection
 * (dead letters, requeues of quorum queues), so that a message is acknowledged only once the broker took its copy.
 */
@Singleton
public class RabbitMQConsumerChannels implements ClientCustomizer<RabbitMQOptions> {

    /** The application's instance, for the connector's acks ({@link RabbitMQAcks}), which are not beans. */
    private static volatile RabbitMQConsumerChannels current;

    private final IdempotentMethods methods;
    private final Map<String, Tracker> trackers = new ConcurrentHashMap<>();

    @Inject
    public RabbitMQConsumerChannels(IdempotentMethods methods) {
        this.methods = methods;
        current = this;
    }

    /** @return the application's instance, or {@code null} before a tracked client was configured */
    static RabbitMQConsumerChannels current() {
        return current;
    }

    @Override
    public RabbitMQOptions customize(String channel, Config channelConfig, RabbitMQOptions options) {
        String connection = options.getConnectionName();
        if (ChannelNames.incoming(channel, methods.channels()) == null
                || (connection != null && connection.endsWith("(Outgoing)"))) {
            return options;
        }
        Tracker tracker = new Tracker(options.getMetricsCollector());
        trackers.put(channel, tracker);
        return options.setMetricsCollector(tracker);
    }

    /**
     * @param channel the channel as the connector names it ({@code <channel>$<i>} for a copy)
     * @return its client's AMQP channels and connection, or {@code null} before its client exists
     */
    Tracker of(String channel) {
        return trackers.get(channel);
    }

    /** A message to publish: its properties and body. */
    record Copy(AMQP.BasicProperties properties, byte[] body) {
    }

    /** One client's AMQP channels, by consumer tag, and its connection. */
    static final class Tracker implements MetricsCollector {

        private final MetricsCollector delegate;
        private final Map<String, Channel> consumers = new ConcurrentHashMap<>();
        private volatile Connection connection;
        private Channel publisher;
        private volatile AMQP.Basic.Return returned;

        Tracker(MetricsCollector delegate) {
            this.delegate = delegate;
        }

        /** @return the AMQP channel a message with this consumer tag was delivered on, or {@code null} */
        Channel deliveredOn(String consumerTag) {
            return consumerTag == null ? null : consumers.get(consumerTag);
        }

        /**
         * Publishes a message and waits until the broker confirmed it: routed (published as mandatory: an unroutable
         * message is returned, which fails here) and taken. Blocking; one at a time per client.
         *
         * @throws IOException when the broker returned or refused it, or the channel failed
         * @throws TimeoutException when it did not confirm in time
         */
        synchronized void publishConfirmed(String exchange, String routingKey, AMQP.BasicProperties properties,
                byte[] body, Duration timeout) throws IOException, InterruptedException, TimeoutException {
            publishConfirmed(exchange, routingKey, List.of(new Copy(properties, body)), timeout);
        }

        /**
         * Publishes messages and waits until the broker confirmed each: routed (as mandatory messages) and taken.
         * Blocking; one caller at a time per client.
         *
         * @throws IOException when the broker returned or refused any of them, or the channel failed
         * @throws TimeoutException when they were not all confirmed in time
         */
        synchronized void publishConfirmed(String exchange, String routingKey, List<Copy> messages, Duration timeout)
                throws IOException, InterruptedException, TimeoutException {
            Channel channel = publisher();
            returned = null;
            for (Copy message : messages) {
                channel.basicPublish(exchange, routingKey, true, message.properties(), message.body());
            }
            channel.waitForConfirmsOrDie(timeout.toMillis());
            AMQP.Basic.Return unroutable = returned;
            if (unroutable != null) {
                throw new IOException("the broker could not route it (" + unroutable.getReplyCode() + " "
                        + unroutable.getReplyText() + ", exchange '" + exchange + "', routing key '" + routingKey + "')");
            }
        }

        /** @return whether the client's connection is open */
        boolean connected() {
            Connection current = connection;
            return current != null && current.isOpen();
        }

        /** @return a new AMQP channel on the client's connection, for its caller to close */
        Channel openChannel() throws IOException {
            Connection current = connection;
            if (current == null || !current.isOpen()) {
                throw new IOException("the consumer's connection is closed");
            }
            return current.createChannel();
        }

        /** Declares a durable queue on a channel of its own (a refusal closes that channel, not the publisher). */
        synchronized void declare(String queue, Map<String, Object> arguments) throws IOException, TimeoutException {
            Channel channel = openChannel();
            try {
                channel.queueDeclare(queue, true, false, false, arguments);
            } finally {
                if (channel.isOpen()) {
                    channel.close();
                }
            }
        }

        private Channel publisher() throws IOException {
            Channel channel = publisher;
            if (channel == null || !channel.isOpen()) {
                Connection current = connection;
                if (current == null || !current.isOpen()) {
                    throw new IOException("the consumer's connection is closed");
                }
                channel = current.createChannel();
                channel.confirmSelect();
                // the broker sends a returned message before its confirm, on this channel's connection thread
                channel.addReturnListener(r -> returned = new AMQP.Basic.Return.Builder().replyCode(r.getReplyCode())
                        .replyText(r.getReplyText()).exchange(r.getExchange()).routingKey(r.getRoutingKey()).build());
                publisher = channel;
            }
            return channel;
        }

        @Override
        public void newConnection(Connection connection) {
            this.connection = connection;
            if (delegate != null) {
                delegate.newConnection(connection);
            }
        }

        @Override
        public void closeConnection(Connection connection) {
            if (delegate != null) {
                delegate.closeConnection(connection);
            }
        }

        @Override
        public void newChannel(Channel channel) {
            if (delegate != null) {
                delegate.newChannel(channel);
            }
        }

        @Override
        public void closeChannel(Channel channel) {
            consumers.values().removeIf(c -> c == channel);
            if (delegate != null) {
                delegate.closeChannel(channel);
            }
        }

        @Override
        public void basicPublish(Channel channel) {
            if (delegate != null) {
                delegate.basicPublish(channel);
            }
        }

        @Override
        public void basicPublishFailure(Channel channel, Throwable cause) {
            if (delegate != null) {
                delegate.basicPublishFailure(channel, cause);
            }
        }

        @Override
        public void basicPublishAck(Channel channel, long deliveryTag, boolean multiple) {
            if (delegate != null) {
                delegate.basicPublishAck(channel, deliveryTag, multiple);
            }
        }

        @Override
        public void basicPublishNack(Channel channel, long deliveryTag, boolean multiple) {
            if (delegate != null) {
                delegate.basicPublishNack(channel, deliveryTag, multiple);
            }
        }

        @Override
        public void basicPublishUnrouted(Channel channel) {
            if (delegate != null) {
                delegate.basicPublishUnrouted(channel);
            }
        }

        @Override
        public void consumedMessage(Channel channel, long deliveryTag, boolean autoAck) {
            if (delegate != null) {
                delegate.consumedMessage(channel, deliveryTag, autoAck);
            }
        }

        @Override
        public void consumedMessage(Channel channel, long deliveryTag, String consumerTag) {
            if (delegate != null) {
                delegate.consumedMessage(channel, deliveryTag, consumerTag);
            }
        }

        @Override
        public void basicAck(Channel channel, long deliveryTag, boolean multiple) {
            if (delegate != null) {
                delegate.basicAck(channel, deliveryTag, multiple);
            }
        }

        @Override
        public void basicNack(Channel channel, long deliveryTag) {
            if (delegate != null) {
                delegate.basicNack(channel, deliveryTag);
            }
        }

        @Override
        public void basicReject(Channel channel, long deliveryTag) {
            if (delegate != null) {
                delegate.basicReject(channel, deliveryTag);
            }
        }

        @Override
        public void basicConsume(Channel channel, String consumerTag, boolean autoAck) {
            consumers.put(consumerTag, channel);
            if (delegate != null) {
                delegate.basicConsume(channel, consumerTag, autoAck);
            }
        }

        @Override
        public void basicCancel(Channel channel, String consumerTag) {
            consumers.remove(consumerTag);
            if (delegate != null) {
                delegate.basicCancel(channel, consumerTag);
            }
        }
    }
}
