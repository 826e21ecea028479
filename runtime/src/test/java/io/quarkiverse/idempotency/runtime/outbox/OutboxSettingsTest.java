package io.quarkiverse.idempotency.runtime.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;

class OutboxSettingsTest {

    static final OutboxSettings SETTINGS = new OutboxSettings(Duration.ofSeconds(30), 500, Duration.ofSeconds(1),
            Duration.ofMinutes(5));

    @Test
    void aRefusedMessageWaitsTwiceAsLongAfterEachFailureUpToTheCap() {
        assertEquals(Duration.ofSeconds(1), SETTINGS.retryDelay(0, 1.0));
        assertEquals(Duration.ofSeconds(2), SETTINGS.retryDelay(1, 1.0));
        assertEquals(Duration.ofSeconds(256), SETTINGS.retryDelay(8, 1.0));
        assertEquals(Duration.ofMinutes(5), SETTINGS.retryDelay(9, 1.0));
        assertEquals(Duration.ofMinutes(5), SETTINGS.retryDelay(1_000, 1.0), "never overflows past the cap");
    }

    @Test
    void retriesOfMessagesRefusedTogetherAreSpreadByUpToAFifth() {
        assertEquals(Duration.ofMillis(800), SETTINGS.retryDelay(0, 0.0));
        Duration spread = SETTINGS.retryDelay(3, 0.5);
        assertTrue(spread.compareTo(Duration.ofMillis(6400)) >= 0 && spread.compareTo(Duration.ofSeconds(8)) < 0,
                spread.toString());
    }

    @Test
    void settingsThatCannotWorkAreRefusedNamingTheProperty() {
        IllegalArgumentException lease = assertThrows(IllegalArgumentException.class,
                () -> new OutboxSettings(Duration.ofMillis(500), 1, Duration.ofSeconds(1), Duration.ofSeconds(1)));
        assertTrue(lease.getMessage().contains("quarkus.idempotency.outbox.lease"), lease.getMessage());
        IllegalArgumentException batch = assertThrows(IllegalArgumentException.class,
                () -> new OutboxSettings(Duration.ofSeconds(30), 0, Duration.ofSeconds(1), Duration.ofSeconds(1)));
        assertTrue(batch.getMessage().contains("quarkus.idempotency.outbox.batch-size"), batch.getMessage());
        IllegalArgumentException delays = assertThrows(IllegalArgumentException.class,
                () -> new OutboxSettings(Duration.ofSeconds(30), 1, Duration.ofMinutes(1), Duration.ofSeconds(1)));
        assertTrue(delays.getMessage().contains("retry-max-delay"), delays.getMessage());
        // no delay would send a refused message again at once, over and over
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                () -> new OutboxSettings(Duration.ofSeconds(30), 1, Duration.ZERO, Duration.ofSeconds(1)));
        assertTrue(none.getMessage().contains("retry-initial-delay"), none.getMessage());
    }

    @Test
    void aRelayTooRareToRenewTheLeasesOfMessagesWaitingForTheirConfirmIsRefused() {
        OutboxSettings.checkRelayEvery("5s", Duration.ofSeconds(30));
        OutboxSettings.checkRelayEvery("PT7.5S", Duration.ofSeconds(30));
        OutboxSettings.checkRelayEvery("off", Duration.ofSeconds(30));
        IllegalArgumentException rare = assertThrows(IllegalArgumentException.class,
                () -> OutboxSettings.checkRelayEvery("10s", Duration.ofSeconds(30)));
        assertTrue(rare.getMessage().contains("quarkus.idempotency.outbox.relay-every (10s)")
                && rare.getMessage().contains("quarkus.idempotency.outbox.lease (PT30S)"), rare.getMessage());
    }
}
