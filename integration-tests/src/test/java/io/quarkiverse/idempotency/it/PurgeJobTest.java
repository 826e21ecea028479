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
 * The purge job the build registers runs on its schedule and deletes expired keys, and only those; {@link PurgeJobIT}
 * runs it against the packaged application (the native executable in native mode).
 */
@QuarkusTest
@TestProfile(PurgeJobTest.EverySecond.class)
class PurgeJobTest {

    @Test
    void theScheduledPurgeDeletesExpiredKeysOnly() {
        Ledger.execute("DELETE FROM idempotency_record WHERE scope = 'purge-test'");
        Ledger.execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at,"
                + " attempts) VALUES ('purge-test:old', 'purge-test', 'CONFIRMED', 'w', now() - interval '2 days',"
                + " now() - interval '1 day', 0), ('purge-test:young', 'purge-test', 'CONFIRMED', 'w', now(),"
                + " now() + interval '1 day', 0)");
        await().atMost(Duration.ofSeconds(30)).until(() -> Ledger.count(
                "SELECT count(*) FROM idempotency_record WHERE scoped_key = 'purge-test:old'") == 0);
        assertEquals(1, Ledger.count("SELECT count(*) FROM idempotency_record WHERE scoped_key = 'purge-test:young'"));
    }

    public static class EverySecond implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.idempotency.purge.every", "1s");
        }
    }
}
