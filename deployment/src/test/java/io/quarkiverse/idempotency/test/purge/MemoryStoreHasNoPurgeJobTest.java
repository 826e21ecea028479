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
 * The memory store forgets expired keys as it goes: no purge job is registered with it.
 */
class MemoryStoreHasNoPurgeJobTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[0], new String[0])
            // started even without jobs, so that the Scheduler API can be asked
            .overrideConfigKey("quarkus.scheduler.start-mode", "forced");

    @Inject
    Scheduler scheduler;

    @Test
    void noPurgeJobWithTheMemoryStore() {
        assertNull(scheduler.getScheduledJob(PurgeJob.IDENTITY));
    }
}
