package io.quarkiverse.idempotency.test.database;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.annotations.Blocking;

/**
 * A retention shorter than a message's retry horizon (the lease, then every delay of the attempt budget) is refused at
 * startup: a key purged before its message's last retry would forget the attempts counted on it.
 */
class ShortRetentionRefusedTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "short" }, Short.class, Charge.class)
            .overrideConfigKey("quarkus.idempotency.channels.short.retention", "40s")
            .overrideConfigKey("quarkus.idempotency.lease", "30s")
            // 1 s, 2 s, 4 s, 8 s at +20 %: 18 s of delays, 48 s with the lease
            .assertException(t -> {
                String messages = TestApps.messages(t);
                assertTrue(messages.contains("The retention for channel short of")
                        && messages.contains("is PT40S, not longer than the time a message of it can still come back:"
                                + " the lease PT30S + the delays of 5 attempts at their longest (PT18S) = PT48S")
                        && messages.contains("Raise the retention above PT48S"), messages);
            });

    @Test
    void refused() {
        fail("the application must not start");
    }

    @Singleton
    public static class Short {

        @Incoming("short")
        @Idempotent
        @Blocking
        @Transactional
        void charge(String orderId) {
            Charge.of(orderId).persist();
        }
    }
}
