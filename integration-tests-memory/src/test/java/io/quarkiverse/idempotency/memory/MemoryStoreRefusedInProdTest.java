package io.quarkiverse.idempotency.memory;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkus.maven.dependency.Dependency;
import io.quarkus.test.QuarkusProdModeTest;

/**
 * The packaged application without a database for its keys, and without {@code quarkus.idempotency.store=memory},
 * does not start in production: it would deduplicate in one process's memory only. Its message names the dependencies
 * to add and the property that chooses the memory store.
 */
class MemoryStoreRefusedInProdTest {

    @RegisterExtension
    static final QuarkusProdModeTest APP = new QuarkusProdModeTest()
            .withApplicationRoot(jar -> jar.addClasses(Consumer.class))
            // the in-memory connector feeds the channel (a channel no connector feeds is a build error)
            .setForcedDependencies(List.of(Dependency.of("io.smallrye.reactive", "smallrye-reactive-messaging-in-memory",
                    "4.33.0")))
            .overrideConfigKey("mp.messaging.incoming.in.connector", "smallrye-in-memory")
            // unset: the module's application chooses the memory store, as a production application must
            .overrideConfigKey("quarkus.idempotency.store", "")
            .setApplicationName("memory-store-refused-in-prod")
            .setApplicationVersion("0.1")
            .setExpectExit(true)
            .setRun(true);

    @Test
    void refusesToStart() {
        String output = APP.getStartupConsoleOutput();
        assertNotEquals(0, APP.getExitCode(), output);
        assertTrue(output.contains("The idempotency keys would live in this process's memory in production"), output);
        assertTrue(output.contains("Add quarkus-jdbc-postgresql"), output);
        assertTrue(output.contains("quarkus.idempotency.store=memory"), output);
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("in")
        @Idempotent
        void handle(String payload) {
        }
    }
}
