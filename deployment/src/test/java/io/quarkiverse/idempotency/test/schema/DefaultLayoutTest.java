package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.logging.LogRecord;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.DatabaseSchema;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * With {@code partitioning} unset, the default, the table is partitioned by time: here Hibernate ORM's schema
 * generation ({@code drop-and-create}) makes it first, unpartitioned and empty, and the extension's startup makes it
 * again partitioned, at once (no move of a table holding no key), without saying anything about its layout.
 */
class DefaultLayoutTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0])
            .setLogRecordPredicate(r -> r.getMessage() != null && r.getMessage().contains("IDEMP300"))
            .assertLogRecords(DefaultLayoutTest::nothingSaidAboutTheLayout);

    static void nothingSaidAboutTheLayout(List<LogRecord> records) {
        assertEquals(List.of(), records.stream().map(LogRecord::getMessage)
                .filter(m -> m.contains("IDEMP3002") || m.contains("IDEMP3008") || m.contains("IDEMP3003")).toList());
    }

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    DatabaseSchema schema;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theTableIsPartitionedByDefault() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals("p", sql.query("SELECT relkind::text FROM pg_class WHERE oid = 'idempotency_record'::regclass"));
        assertTrue(store.partitioned());
        assertTrue(Integer.parseInt(sql.query("SELECT count(*)::text FROM pg_inherits"
                + " WHERE inhparent = 'idempotency_record'::regclass")) >= 4, "partitions made ahead");
        ScopedKey key = new ScopedKey("s", "k");
        assertEquals(ClaimResult.NEW, store.claim(key, "t#1", Duration.ofSeconds(30), Duration.ofHours(1)).result());
        store.confirm(key, "t#1", Duration.ofHours(1));
        assertEquals(ClaimResult.DONE, store.claim(key, "t#2", Duration.ofSeconds(30), Duration.ofHours(1)).result());
        schema.updateSchema(); // again: a table holding a key is not made again
        assertEquals(ClaimResult.DONE, store.claim(key, "t#3", Duration.ofSeconds(30), Duration.ofHours(1)).result());
        assertEquals("1", sql.query("SELECT count(*)::text FROM idempotency_record"));
    }
}
