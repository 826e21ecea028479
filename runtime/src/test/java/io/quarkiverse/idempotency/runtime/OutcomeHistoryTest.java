package io.quarkiverse.idempotency.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

class OutcomeHistoryTest {

    final AtomicLong now = new AtomicLong(1_000 * 60_000L + 5_000);
    final OutcomeHistory history = new OutcomeHistory(now::get);

    @Test
    void eachMinuteCountsItsOwnOutcomesAndTheLastHourEndsNow() {
        history.count(OutcomeHistory.Series.HANDLED);
        history.count(OutcomeHistory.Series.HANDLED);
        history.count(OutcomeHistory.Series.REPUBLISH);
        now.addAndGet(60_000);
        history.count(OutcomeHistory.Series.REDELIVERY);

        Map<String, List<Long>> hour = history.lastHour();
        assertEquals(60, hour.get("minutes").size());
        assertEquals(1_001 * 60_000L, hour.get("minutes").get(59), "the last bar is the current minute");
        assertEquals(List.of(2L, 0L), hour.get("handled").subList(58, 60));
        assertEquals(List.of(1L, 0L), hour.get("duplicate: republish").subList(58, 60));
        assertEquals(List.of(0L, 1L), hour.get("duplicate: redelivery").subList(58, 60));
    }

    @Test
    void aMinuteAnHourOldIsForgottenWhenTheRingComesBackToIt() {
        history.count(OutcomeHistory.Series.BUSY);
        now.addAndGet(60 * 60_000L);
        assertEquals(Collections.nCopies(60, 0L), history.lastHour().get("busy"), "an hour later it is out of the chart");
        history.count(OutcomeHistory.Series.DEAD_LETTERED);
        Map<String, List<Long>> hour = history.lastHour();
        assertEquals(1L, hour.get("dead-lettered").get(59));
        assertEquals(Collections.nCopies(60, 0L), hour.get("busy"), "its slot was cleared, not added to");
    }
}
