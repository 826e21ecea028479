package io.quarkiverse.idempotency.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * The payments channel switched to digest keys an hour ago, on the real RabbitMQ and PostgreSQL: new keys are stored as
 * keyed digests (the order id is nowhere in the table), and for one retention a key written readable before the switch
 * still answers for its order (a payment handled then is not charged again, and its key is copied to the digest form).
 */
@QuarkusTest
@TestProfile(DigestKeysTest.SwitchedToDigests.class)
class DigestKeysTest extends BrokerTestSupport {

    static final String SECRET = "the payments' key secret, 32+ characters long";

    @Test
    void newKeysAreDigestsAndAKeyWrittenReadableBeforeTheSwitchStillAnswers() {
        // a payment handled before the switch: its key is readable
        Ledger.execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, expires_at,"
                + " attempts, message_id) VALUES ('payments:charge:H-1', 'payments', 'CONFIRMED', 'before#1',"
                + " now() - interval '2 hours', now() + interval '22 hours', 0, 'm-before')");
        broker.publishToQueue("m-" + UUID.randomUUID(), Broker.payment("H-1", 100));
        broker.publishToQueue("m-" + UUID.randomUUID(), Broker.payment("H-2", 200));
        broker.publishToQueue("m-" + UUID.randomUUID(), Broker.payment("H-2", 200));
        await().atMost(Duration.ofSeconds(20)).until(() -> Ledger.charges("H-2") == 1 && broker.ready(Broker.QUEUE) == 0
                && Ledger.claims() == 0);
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(8))
                .until(() -> Ledger.charges("H-1") == 0 && Ledger.charges("H-2") == 1);

        assertEquals("CONFIRMED", Ledger.text("SELECT state FROM idempotency_record WHERE scoped_key = 'payments:"
                + digest("charge:H-2") + "'"), "the new key stored as its digest");
        assertEquals("CONFIRMED", Ledger.text("SELECT state FROM idempotency_record WHERE scoped_key = 'payments:"
                + digest("charge:H-1") + "'"), "the old key copied to its digest form");
        assertEquals(0, Ledger.count("SELECT count(*) FROM idempotency_record WHERE scoped_key LIKE '%H-2%'"),
                "the order id is nowhere in the table");
        assertTrue(Ledger.count("SELECT count(*) FROM idempotency_record WHERE scoped_key = 'payments:charge:H-1'") == 1,
                "the readable key stays until it expires");
    }

    /** The digest the extension stores: HMAC-SHA-256 of the key with the secret, base64url, after {@code hmac:}. */
    static String digest(String key) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return "hmac:" + Base64.getUrlEncoder().withoutPadding()
                    .encodeToString(mac.doFinal(key.getBytes(StandardCharsets.UTF_8)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    public static class SwitchedToDigests implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.idempotency.key-storage", "digest",
                    "quarkus.idempotency.key-digest-secret", SECRET,
                    "quarkus.idempotency.key-storage-changed-at", Instant.now().minus(Duration.ofHours(1)).toString());
        }
    }
}
