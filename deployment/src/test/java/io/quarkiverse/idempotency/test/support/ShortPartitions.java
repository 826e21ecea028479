package io.quarkiverse.idempotency.test.support;

import java.sql.SQLException;
import java.time.Duration;

import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkus.test.QuarkusUnitTest;

/** Applications whose keys live a second, in partitions of two seconds, for the tests of partitions' ends. */
public final class ShortPartitions {

    private ShortPartitions() {
    }

    /** The application on its own table, the purge job every hour (so that only the partition ends drop partitions). */
    public static QuarkusUnitTest app(String table) {
        return TestApps.postgres(new String[0], ShortPartitions.class)
                .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
                .overrideConfigKey("quarkus.idempotency.database.table", table)
                .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
                .overrideConfigKey("quarkus.idempotency.database.partitioning", "time")
                .overrideConfigKey("quarkus.idempotency.database.partition-period", "2s")
                .overrideConfigKey("quarkus.idempotency.retention", "1s")
                .overrideConfigKey("quarkus.idempotency.purge.every", "1h");
    }

    /** @return the partition that holds a key just claimed */
    public static String partitionOfANewKey(DatabaseIdempotencyStore store, Sql sql, String table) throws SQLException {
        ScopedKey key = new ScopedKey("ends", "k-" + System.nanoTime());
        store.claim(key, "t", Duration.ofSeconds(30), Duration.ofSeconds(1));
        return sql.query("SELECT tableoid::regclass::text FROM " + table + " WHERE scoped_key = '" + key + "'");
    }
}
