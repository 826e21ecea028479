package io.quarkiverse.idempotency.test.rabbitmq;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.logging.Level;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A connector-wide failure strategy is not silently replaced by the channel default the build sets: it becomes the
 * strategy for the failures the extension does not map, and a warning at startup names both keys.
 */
class ConnectorWideFailureStrategyTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = RabbitApps.app(new String[] { "idempotency-test-connector-wide" },
            Consumer.class)
            .overrideConfigKey("mp.messaging.connector.smallrye-rabbitmq.failure-strategy", "requeue")
            .setLogRecordPredicate(r -> r.getLevel().intValue() >= Level.WARNING.intValue()
                    && r.getLoggerName().startsWith("io.quarkiverse.idempotency"))
            .assertLogRecords(records -> {
                long warnings = records.stream().filter(r -> {
                    // the message as it is printed: its format with its parameters
                    String m = r.getMessage() == null ? ""
                            : r.getParameters() == null ? r.getMessage() : String.format(r.getMessage(), r.getParameters());
                    return m.startsWith("IDEMP4004: ")
                            && m.contains("mp.messaging.connector.smallrye-rabbitmq.failure-strategy=requeue")
                            && m.contains("mp.messaging.incoming.idempotency-test-connector-wide.idempotency.failure-strategy")
                            && m.contains("quarkus.idempotency.retry");
                }).count();
                assertEquals(1, warnings, "one warning naming both keys: " + records);
            });

    @Inject
    IdempotentMethods methods;

    @Test
    void startsWithTheChannelOnTheIdempotencyStrategy() {
        // the warning is asserted on the log once the application stops
        assertEquals("smallrye-rabbitmq", methods.connector("idempotency-test-connector-wide"));
        assertEquals("idempotency", ConfigProvider.getConfig()
                .getValue("mp.messaging.incoming.idempotency-test-connector-wide.failure-strategy", String.class));
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("idempotency-test-connector-wide")
        @Idempotent
        void handle(String payload) {
        }
    }
}
