package io.quarkiverse.idempotency.test.purge;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A purge batch of 0 would loop for ever holding the purge's lock (and hang the Dev UI's "purge now"); a negative one
 * would fail every run: startup refuses both, naming the setting.
 */
class PurgeBatchSizeTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[0], new String[0])
            .overrideConfigKey("quarkus.idempotency.purge.batch-size", "0")
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    if (c.getMessage() != null && c.getMessage()
                            .contains("quarkus.idempotency.purge.batch-size must be at least 1, not 0")) {
                        return;
                    }
                }
                throw new AssertionError("expected the batch-size error", t);
            });

    @Test
    void startupFails() {
        fail("startup must fail");
    }
}
