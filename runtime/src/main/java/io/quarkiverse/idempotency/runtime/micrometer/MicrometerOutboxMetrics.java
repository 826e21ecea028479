package io.quarkiverse.idempotency.runtime.micrometer;

import java.util.concurrent.TimeUnit;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.quarkus.runtime.StartupEvent;

/**
 * The outbox's meters: messages sent at their commit and by the relay, refused sendings, the time from a sending to
 * the broker's confirm, and, as the relay job last read them, the messages waiting and the age of the oldest.
 * Registered with Micrometer and an {@code OutboxEmitter} in the application.
 */
@Singleton
public class MicrometerOutboxMetrics {

    void register(@Observes StartupEvent event, MeterRegistry registry, Outbox outbox) {
        FunctionCounter.builder("idempotency.outbox.sent", outbox, o -> o.counts().sentAtOnce()).tag("path", "at-commit")
                .description("Outbox messages sent and confirmed just after their transaction committed")
                .register(registry);
        FunctionCounter.builder("idempotency.outbox.sent", outbox, o -> o.counts().relayed()).tag("path", "relay")
                .description("Outbox messages sent and confirmed by the relay (after a crash, a refusal, or for"
                        + " another instance): re-sends, under their ids")
                .register(registry);
        FunctionCounter.builder("idempotency.outbox.failures", outbox, o -> o.counts().failures())
                .description("Outbox sendings the broker refused or that failed; each is retried").register(registry);
        Gauge.builder("idempotency.outbox.waiting", outbox, o -> o.lastBacklog().waiting())
                .description("Outbox messages not yet confirmed, as the relay job last counted them").register(registry);
        Gauge.builder("idempotency.outbox.oldest.age", outbox, o -> o.lastBacklog().oldest().toMillis() / 1000.0)
                .baseUnit("seconds").description("How long the oldest unsent outbox message has waited")
                .register(registry);
        Timer confirm = Timer.builder("idempotency.outbox.confirm")
                .description("From an outbox message's sending to the broker's confirm").register(registry);
        outbox.onConfirmed(nanos -> confirm.record(nanos, TimeUnit.NANOSECONDS));
    }
}
