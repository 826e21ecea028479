package io.quarkiverse.idempotency.it;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/** The extension's counters on the payments channel, as the tests read them. */
final class Meters {

    private Meters() {
    }

    /** @return how many deliveries on the payments channel ended with that outcome so far */
    static double deliveries(MeterRegistry metrics, String outcome) {
        return count(metrics.find("idempotency.deliveries").tag("channel", "payments").tag("outcome", outcome)
                .counter());
    }

    /** @return how many duplicates on the payments channel came from that origin with that payload comparison */
    static double duplicates(MeterRegistry metrics, String origin, String payload) {
        return count(metrics.find("idempotency.duplicates").tag("channel", "payments").tag("origin", origin)
                .tag("payload", payload).counter());
    }

    private static double count(Counter counter) {
        return counter == null ? 0 : counter.count();
    }
}
