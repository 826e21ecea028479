package io.quarkiverse.idempotency.test.database;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A lease batch of 0 could hold no claim at all: startup refuses it, naming the setting.
 */
class LeaseBatchSizeTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0])
            .overrideConfigKey("quarkus.idempotency.database.lease-batch-size", "0")
            .assertException(t -> {
                String messages = TestApps.messages(t);
                assertTrue(messages.contains("quarkus.idempotency.database.lease-batch-size must be at least 1, not 0"),
                        messages);
            });

    @Test
    void startupFails() {
        fail("startup must fail");
    }
}
