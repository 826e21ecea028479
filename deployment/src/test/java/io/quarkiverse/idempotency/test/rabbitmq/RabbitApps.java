package io.quarkiverse.idempotency.test.rabbitmq;

import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Test applications consuming the real RabbitMQ (the tests' broker, see TestServices),
 * and the tests' own AMQP connection to it.
 */
final class RabbitApps {

    private RabbitApps() {
    }

    /**
     * @param channels each channel consumes the queue of the same name, dead-lettering to {@code <queue>.dlq}
     */
    static QuarkusUnitTest app(String[] channels, Class<?>... classes) {
        QuarkusUnitTest test = bare(classes);
        for (String channel : channels) {
            queue(test, channel);
            test.overrideConfigKey("mp.messaging.incoming." + channel + ".auto-bind-dlq", "true")
                    .overrideConfigKey("mp.messaging.incoming." + channel + ".dlx.declare", "true");
        }
        return test;
    }

    /** An application on the memory store and the real broker, with no channel configured yet. */
    static QuarkusUnitTest bare(Class<?>... classes) {
        return new QuarkusUnitTest()
                .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(classes)
                        .addClass(RabbitApps.class))
                .overrideConfigKey("quarkus.devservices.enabled", "false")
                .overrideConfigKey("quarkus.datasource.active", "false")
                .overrideConfigKey("quarkus.hibernate-orm.active", "false")
                .overrideConfigKey("quarkus.idempotency.store", "memory")
                .overrideConfigKey("rabbitmq-host", TestServices.rabbitmq().host())
                .overrideConfigKey("rabbitmq-port", String.valueOf(TestServices.rabbitmq().port()))
                .overrideConfigKey("rabbitmq-username", TestServices.rabbitmq().user())
                .overrideConfigKey("rabbitmq-password", TestServices.rabbitmq().password());
    }

    /** Wires a channel to the queue of its name, on an exchange of its name. */
    static QuarkusUnitTest queue(QuarkusUnitTest test, String channel) {
        return test.overrideConfigKey("mp.messaging.incoming." + channel + ".connector", "smallrye-rabbitmq")
                .overrideConfigKey("mp.messaging.incoming." + channel + ".queue.name", channel)
                .overrideConfigKey("mp.messaging.incoming." + channel + ".exchange.name", channel);
    }

    static Connection connect() throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(TestServices.rabbitmq().host());
        factory.setPort(TestServices.rabbitmq().port());
        factory.setUsername(TestServices.rabbitmq().user());
        factory.setPassword(TestServices.rabbitmq().password());
        return factory.newConnection("idempotency-test");
    }

    /** Waits until the application declared the queues, then empties them. */
    static void purge(Connection connection, String... queues) {
        for (String queue : queues) {
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
                try (Channel channel = connection.createChannel()) {
                    channel.queuePurge(queue);
                    return true;
                }
            });
        }
    }

    static void publish(Channel channel, String queue, String messageId, String contentType, String body)
            throws Exception {
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().contentType(contentType)
                .messageId(messageId).deliveryMode(2).headers(Map.of()).build();
        channel.basicPublish("", queue, properties, body.getBytes(StandardCharsets.UTF_8));
    }

    /** @return the next message of a queue, waiting for it */
    static GetResponse next(Channel channel, String queue, Duration atMost) {
        return await().atMost(atMost).until(() -> channel.basicGet(queue, true), r -> r != null);
    }

    static String header(GetResponse response, String name) {
        Object value = response.getProps().getHeaders() == null ? null : response.getProps().getHeaders().get(name);
        return value == null ? null : value.toString();
    }

    static String body(GetResponse response) {
        return new String(response.getBody(), StandardCharsets.UTF_8);
    }
}
