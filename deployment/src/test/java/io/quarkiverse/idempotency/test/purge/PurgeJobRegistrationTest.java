package io.quarkiverse.idempotency.test.purge;

import static org.junit.jupiter.api.Assertions.assertNull;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.runtime.PurgeJob;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The purge job is not registered when purging is disabled, even with the database store.
 */
class PurgeJobRegistrationTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0])
            .overrideConfigKey("quarkus.idempotency.purge.enabled", "false")
            // started even without jobs, so that the Scheduler API can be asked
            .overrideConfigKey("quarkus.scheduler.start-mode", "forced");

    @Inject
    Scheduler scheduler;

    @Test
    void noPurgeJobWhenDisabled() {
        assertNull(scheduler.getScheduledJob(PurgeJob.IDENTITY));
    }
}
