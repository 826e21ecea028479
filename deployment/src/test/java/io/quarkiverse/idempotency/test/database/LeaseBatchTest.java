package io.quarkiverse.idempotency.test.database;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/** Lease-mode claims and confirms in batches ({@link LeaseBatchCases}), on one table. */
class LeaseBatchTest extends LeaseBatchCases {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], LeaseBatchCases.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "lease_batch_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            .overrideConfigKey("quarkus.idempotency.purge.every", "off");

    @Override
    String table() {
        return "lease_batch_keys";
    }
}
