package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;

import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.ShortPartitions;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The partition-end purges start with the application, not with the purge job's first run: the scheduler may skip
 * that run (it fires while the application is still starting) and the next one is an hour away. Here the job never
 * runs (the scheduler halted), and a partition is still dropped as it ends.
 */
class PartitionEndsWithoutTheJobTest {

    static final String TABLE = "partition_ends_nojob_keys";

    @RegisterExtension
    static final QuarkusUnitTest APP = ShortPartitions.app(TABLE)
            // the scheduler halted: the job never runs, as when its first run is skipped during a slow start
            .overrideConfigKey("quarkus.scheduler.start-mode", "halted");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void aPartitionIsDroppedAsItEndsThoughTheJobNeverRan() throws Exception {
        Sql sql = new Sql(dataSource);
        String partition = ShortPartitions.partitionOfANewKey(store, sql, TABLE);
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                .until(() -> sql.query("SELECT to_regclass('" + partition + "')::text") == null);
    }
}
