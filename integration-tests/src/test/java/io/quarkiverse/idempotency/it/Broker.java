package io.quarkiverse.idempotency.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import org.awaitility.Awaitility;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.testing.TestServices;

/**
 * The test's own AMQP connection to the real RabbitMQ: publishes payments and reads queue depths.
 */
public final class Broker implements AutoCloseable {

    public static final String EXCHANGE = "payments";
    public static final String QUEUE = "payments";
    public static final String DLQ = "payments.dlq";
    public static final String AUDIT_QUEUE = "payments-audit";

    private final String queue;
    private final Connection connection;
    private final Channel channel;

    /** The test's connection to the demo's payments queue. */
    public Broker() {
        this(QUEUE);
    }

    /** @param queue the queue the payments consumer reads (the payments queue, unless a test renamed it) */
    public Broker(String queue) {
        this.queue = queue;
        try {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost(TestServices.rabbitmq().host());
            factory.setPort(TestServices.rabbitmq().port());
            factory.setUsername(TestServices.rabbitmq().user());
            factory.setPassword(TestServices.rabbitmq().password());
            this.connection = factory.newConnection("idempotency-it");
            this.channel = connection.createChannel();
            channel.confirmSelect();
        } catch (Exception e) {
            throw new IllegalStateException("RabbitMQ does not answer", e);
        }
    }

    /** Waits until the application has declared the queues, then empties them. */
    /** The suffix of the queue where the extension parks messages waiting for their retry (its WaitQueue). */
    static final String WAIT_QUEUE = ".idempotency-wait";

    public void reset() {
        // messages waiting for their retry in the extension's wait queue would come back after the reset
        try (Channel c = connection.createChannel()) {
            c.queueDeclarePassive(queue + WAIT_QUEUE);
            c.queuePurge(queue + WAIT_QUEUE);
        } catch (Exception e) {
            // no wait queue: no message waits there
        }
        for (String name : new String[] { queue, queue + ".dlq", AUDIT_QUEUE, AUDIT_QUEUE + ".dlq" }) {
            Awaitility.await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
                try (Channel c = connection.createChannel()) {
                    c.queuePurge(name);
                    return true;
                }
            });
        }
    }

    /** Publishes to the payments exchange (both the payments and the audit queue get it). */
    public void publish(String messageId, String json) {
        send(EXCHANGE, "payment", messageId, json);
    }

    /** Publishes straight to the payments queue only (this broker's queue). */
    public void publishToQueue(String messageId, String json) {
        send("", queue, messageId, json);
    }

    /** Publishes a raw body, of any content type, straight to the payments queue. */
    public void publishRaw(String messageId, String contentType, String body) {
        send("", queue, messageId, contentType, body);
    }

    /** @return the next dead letter of the payments queue, or {@code null} when there is none */
    public GetResponse nextDeadLetter() {
        try {
            synchronized (channel) {
                return channel.basicGet(queue + ".dlq", true);
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    public static String payment(String orderId, long amountCents) {
        return orderId == null ? "{\"amountCents\": " + amountCents + "}"
                : "{\"orderId\": \"" + orderId + "\", \"amountCents\": " + amountCents + "}";
    }

    private void send(String exchange, String routingKey, String messageId, String json) {
        send(exchange, routingKey, messageId, "application/json", json);
    }

    private void send(String exchange, String routingKey, String messageId, String contentType, String json) {
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().contentType(contentType)
                .messageId(messageId).deliveryMode(2).headers(Map.of()).build();
        try {
            synchronized (channel) {
                channel.basicPublish(exchange, routingKey, properties, json.getBytes(StandardCharsets.UTF_8));
                channel.waitForConfirmsOrDie(10_000);
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

    /** @return consumers attached to a queue */
    public int consumers(String queue) {
        try (Channel c = connection.createChannel()) {
            return c.queueDeclarePassive(queue).getConsumerCount();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Deletes a queue, whatever it holds (a queue a test declared for itself). */
    public void delete(String name) {
        try (Channel c = connection.createChannel()) {
            c.queueDelete(name);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        try {
            connection.close();
        } catch (Exception e) {
            // closing anyway
        }
    }
}
