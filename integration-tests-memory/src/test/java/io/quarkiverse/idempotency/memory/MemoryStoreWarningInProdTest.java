package io.quarkiverse.idempotency.memory;

import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Outgoing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkus.test.QuarkusProdModeTest;
import io.smallrye.mutiny.Multi;

/**
 * The packaged application running in prod with the memory store warns that every process remembers only its own
 * keys, and says what to use instead.
 */
class MemoryStoreWarningInProdTest {

    @RegisterExtension
    static final QuarkusProdModeTest APP = new QuarkusProdModeTest()
            .withApplicationRoot(jar -> jar.addClasses(Consumer.class))
            .setApplicationName("memory-store-in-prod")
            .setApplicationVersion("0.1")
            .setRun(true);

    @Test
    void warnsAtStartup() {
        String output = APP.getStartupConsoleOutput();
        assertTrue(output.contains("quarkus.idempotency.store is 'memory' in production"), output);
        assertTrue(output.contains("set quarkus.idempotency.store=database"), output);
    }

    @ApplicationScoped
    public static class Consumer {
        // an internal channel: the packaged application has no test connector
        @Outgoing("in")
        Multi<String> source() {
            return Multi.createFrom().empty();
        }

        @Incoming("in")
        @Idempotent
        void handle(String payload) {
        }
    }
}
