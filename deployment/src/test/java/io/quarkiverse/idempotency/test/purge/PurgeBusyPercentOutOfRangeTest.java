package io.quarkiverse.idempotency.test.purge;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A purge pace out of range stops the application at startup, naming the setting, rather than a purge that never
 * pauses or never ends.
 */
class PurgeBusyPercentOutOfRangeTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[0], new String[0])
            .overrideConfigKey("quarkus.idempotency.purge.busy-percent", "0")
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    if (c.getMessage() != null
                            && c.getMessage().contains("quarkus.idempotency.purge.busy-percent must be from 1 to 100")) {
                        return;
                    }
                }
                throw new AssertionError("expected the busy-percent range error", t);
            });

    @Test
    void startupFails() {
        fail("startup must fail");
    }
}
