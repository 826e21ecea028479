package io.quarkiverse.idempotency.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * The other direction: the payments channel went back from digest keys to readable ones an hour ago. A key written as
 * a digest before still answers for its order (the secret is still configured, so the digest of a readable key can be
 * computed and looked up), and new keys are readable.
 */
@QuarkusTest
@TestProfile(ReadableKeysAgainTest.SwitchedBackToReadable.class)
class ReadableKeysAgainTest extends BrokerTestSupport {

    @Test
    void aKeyWrittenAsADigestBeforeTheSwitchStillAnswers() {
        Ledger.execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at,"
                + " attempts) VALUES ('payments:" + DigestKeysTest.digest("charge:J-1") + "', 'payments', 'CONFIRMED',"
                + " 'before#1', now() - interval '2 hours', now() + interval '22 hours', 0)");
        broker.publishToQueue("m-" + UUID.randomUUID(), Broker.payment("J-1", 100));
        broker.publishToQueue("m-" + UUID.randomUUID(), Broker.payment("J-2", 200));
        await().atMost(Duration.ofSeconds(20)).until(() -> Ledger.charges("J-2") == 1 && broker.ready(Broker.QUEUE) == 0
                && Ledger.claims() == 0);
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(8)).until(() -> Ledger.charges("J-1") == 0);
        assertEquals("CONFIRMED", Ledger.text("SELECT state FROM idempotency_record WHERE scoped_key = 'payments:charge:J-1'"),
                "copied to the readable form");
        assertEquals("CONFIRMED", Ledger.text("SELECT state FROM idempotency_record WHERE scoped_key = 'payments:charge:J-2'"),
                "new keys are readable again");
    }

    public static class SwitchedBackToReadable implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.idempotency.key-storage", "readable",
                    "quarkus.idempotency.key-digest-secret", DigestKeysTest.SECRET,
                    "quarkus.idempotency.key-storage-changed-at", Instant.now().minus(Duration.ofHours(1)).toString());
        }
    }
}
