package io.quarkiverse.idempotency.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * The purge job the build registers runs on its schedule and removes expired keys, and only those: on a table
 * partitioned by expiry (what the shipped migration creates on PostgreSQL 14 or later) it drops a partition whose keys
 * all expired, on an unpartitioned one (a table of an earlier version) it deletes expired rows. {@link PurgeJobIT} runs
 * it against the packaged application (the native executable in native mode).
 */
@QuarkusTest
@TestProfile(PurgeJobTest.EverySecond.class)
class PurgeJobTest {

    static final String EXPIRED_PARTITION = "idempotency_record_p20000101_000000";

    @Test
    void theScheduledPurgeRemovesExpiredKeysOnly() {
        Ledger.execute("DELETE FROM idempotency_record WHERE scope = 'purge-test'");
        boolean partitioned = Ledger.count("SELECT count(*) FROM pg_class WHERE oid = 'idempotency_record'::regclass"
                + " AND relkind = 'p'") == 1;
        if (partitioned) {
            // a partition of keys that expired long ago, as if the application had been stopped since
            Ledger.execute("CREATE TABLE IF NOT EXISTS " + EXPIRED_PARTITION + " PARTITION OF idempotency_record"
                    + " FOR VALUES FROM ('2000-01-01 00:00:00+00') TO ('2000-01-02 00:00:00+00')");
        }
        Ledger.execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at,"
                + " attempts) VALUES ('purge-test:old', 'purge-test', 'CONFIRMED', 'w', '2000-01-01 06:00:00+00',"
                + " '2000-01-01 12:00:00+00', 0), ('purge-test:young', 'purge-test', 'CONFIRMED', 'w', now(),"
                + " now() + interval '1 day', 0)");
        await().atMost(Duration.ofSeconds(30)).until(() -> Ledger.count(
                "SELECT count(*) FROM idempotency_record WHERE scoped_key = 'purge-test:old'") == 0);
        assertEquals(1, Ledger.count("SELECT count(*) FROM idempotency_record WHERE scoped_key = 'purge-test:young'"));
        if (partitioned) {
            assertEquals(0, Ledger.count("SELECT count(*) FROM pg_class WHERE relname = '" + EXPIRED_PARTITION + "'"),
                    "the expired partition dropped whole");
        }
    }

    public static class EverySecond implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.idempotency.purge.every", "1s");
        }
    }
}
