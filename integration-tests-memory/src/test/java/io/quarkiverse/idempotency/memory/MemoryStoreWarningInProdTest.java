package io.quarkiverse.idempotency.memory;

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
 * The packaged application running in prod with the memory store it chose ({@code quarkus.idempotency.store=memory})
 * warns that every process remembers only its own keys, and says what to use instead. Unchosen, the memory store is
 * refused in production: {@link MemoryStoreRefusedInProdTest}.
 */
class MemoryStoreWarningInProdTest {

    @RegisterExtension
    static final QuarkusProdModeTest APP = new QuarkusProdModeTest()
            .withApplicationRoot(jar -> jar.addClasses(Consumer.class))
            // the in-memory connector feeds the channel (a channel no connector feeds is a build error)
            .setForcedDependencies(List.of(Dependency.of("io.smallrye.reactive", "smallrye-reactive-messaging-in-memory",
                    "4.33.0")))
            .overrideConfigKey("mp.messaging.incoming.in.connector", "smallrye-in-memory")
            .overrideConfigKey("quarkus.idempotency.store", "memory")
            .setApplicationName("memory-store-in-prod")
            .setApplicationVersion("0.1")
            .setRun(true);

    @Test
    void warnsAtStartup() {
        String output = APP.getStartupConsoleOutput();
        assertTrue(output.contains("IDEMP1001: quarkus.idempotency.store is 'memory' in production"), output);
        assertTrue(output.contains("set quarkus.idempotency.store=database"), output);
    }

    @ApplicationScoped
    public static class Consumer {

        @Incoming("in")
        @Idempotent
        void handle(String payload) {
        }
    }
}
