package io.quarkiverse.idempotency.test.database;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/** Lease-mode claims and confirms in batches ({@link LeaseBatchCases}), on a table partitioned by expiry. */
class PartitionedLeaseBatchTest extends LeaseBatchCases {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], LeaseBatchCases.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "lease_batch_partitioned")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "time")
            .overrideConfigKey("quarkus.idempotency.purge.every", "off");

    @Override
    String table() {
        return "lease_batch_partitioned";
    }
}
