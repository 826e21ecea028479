package io.quarkiverse.idempotency.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;

class DuplicateAgesTest {

    final DuplicateAges ages = new DuplicateAges();
    static final Duration DAY = Duration.ofHours(24);

    @Test
    void theFirstDuplicateInTheLastTenthOfTheRetentionIsToldOncePerChannel() {
        assertFalse(ages.observe("payments", Duration.ofHours(21), DAY), "21 h of 24: not yet the last tenth");
        assertTrue(ages.observe("payments", Duration.ofMinutes(22 * 60), DAY), "22 h of 24: the last tenth");
        assertFalse(ages.observe("payments", Duration.ofHours(23), DAY), "told once");
        assertTrue(ages.observe("audit", Duration.ofHours(23), DAY), "each channel once");
    }

    @Test
    void theOldestDuplicateOfEachChannelIsKeptAgainstItsRetention() {
        ages.observe("payments", Duration.ofSeconds(3), DAY);
        ages.observe("payments", Duration.ofHours(2), DAY);
        ages.observe("payments", Duration.ofMinutes(5), DAY);
        assertEquals(new DuplicateAges.Oldest(Duration.ofHours(2), DAY), ages.oldest().get("payments"));
    }
}
