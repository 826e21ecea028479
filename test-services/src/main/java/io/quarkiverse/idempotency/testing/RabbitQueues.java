package io.quarkiverse.idempotency.testing;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import org.awaitility.Awaitility;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;

/**
 * A test's own AMQP connection to the real RabbitMQ ({@link TestServices#rabbitmq()}): publishes payments straight to a
 * queue, confirmed by the broker, reads a queue's dead letters, counts what is ready, empties queues.
 */
public class RabbitQueues implements AutoCloseable {

    private final Connection connection;
    private final Channel channel;

    public RabbitQueues(String connectionName) {
        try {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost(TestServices.rabbitmq().host());
            factory.setPort(TestServices.rabbitmq().port());
            factory.setUsername(TestServices.rabbitmq().user());
            factory.setPassword(TestServices.rabbitmq().password());
            this.connection = factory.newConnection(connectionName);
            this.channel = connection.createChannel();
            channel.confirmSelect();
        } catch (Exception e) {
            throw new IllegalStateException("RabbitMQ does not answer", e);
        }
    }

    /** Waits until the application has declared each queue and its dead-letter queue, then empties them. */
    public void purge(String... queues) {
        for (String queue : queues) {
            for (String name : new String[] { queue, queue + ".dlq" }) {
                Awaitility.await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
                    try (Channel c = connection.createChannel()) {
                        c.queuePurge(name);
                        return true;
                    }
                });
            }
        }
    }

    /** Publishes a JSON message straight to a queue, persistent, confirmed by the broker. */
    public void publish(String queue, String messageId, String json) {
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().contentType("application/json")
                .messageId(messageId).deliveryMode(2).headers(Map.of()).build();
        try {
            synchronized (channel) {
                channel.basicPublish("", queue, properties, json.getBytes(StandardCharsets.UTF_8));
                channel.waitForConfirmsOrDie(10_000);
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return the next dead letter of a queue, or {@code null} when there is none */
    public GetResponse nextDeadLetter(String queue) {
        try {
            synchronized (channel) {
                return channel.basicGet(queue + ".dlq", true);
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Declares a durable queue bound to a fanout exchange (declared as the connector declares an outgoing channel's),
     * and empties it: it then receives what the application sends to the exchange.
     */
    public void bind(String queue, String exchange) {
        try (Channel c = connection.createChannel()) {
            c.exchangeDeclare(exchange, "fanout", true);
            c.queueDeclare(queue, true, false, false, Map.of());
            c.queueBind(queue, exchange, "");
            c.queuePurge(queue);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return the next message of a queue, acknowledged, or {@code null} when there is none */
    public GetResponse next(String queue) {
        try {
            synchronized (channel) {
                return channel.basicGet(queue, true);
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return messages ready in a queue (not counting those delivered and not yet acked) */
    public long ready(String queue) {
        try (Channel c = connection.createChannel()) {
            return c.queueDeclarePassive(queue).getMessageCount();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * @return for a failure's message, each queue's messages ready (not counting those delivered and not yet acked) and
     *         consumers attached (a consumer no test started, of a process an earlier run left behind, shows here)
     */
    public String describe(String... queues) {
        StringBuilder described = new StringBuilder();
        for (String queue : queues) {
            described.append(described.isEmpty() ? "" : ", ").append(queue).append(' ');
            try (Channel c = connection.createChannel()) {
                AMQP.Queue.DeclareOk state = c.queueDeclarePassive(queue);
                described.append(state.getMessageCount()).append(" ready, ").append(state.getConsumerCount())
                        .append(state.getConsumerCount() == 1 ? " consumer" : " consumers");
            } catch (Exception e) {
                described.append("unknown (").append(e).append(')');
            }
        }
        return described.toString();
    }

    /** @return a payment's JSON, with more fields when {@code extra} is not empty */
    public static String payment(String orderId, String extra) {
        return "{\"orderId\": \"" + orderId + "\", \"amountCents\": 1299" + (extra.isEmpty() ? "" : ", " + extra) + "}";
    }

    @Override
    public void close() throws Exception {
        connection.close();
    }
}
