package io.quarkiverse.idempotency.runtime.opentelemetry;

import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.reactive.messaging.Metadata;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.quarkiverse.idempotency.AttemptsExhaustedException;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.runtime.DeliveryState;
import io.quarkiverse.idempotency.runtime.DeliveryTracing;
import io.quarkiverse.idempotency.runtime.DeliveryView;
import io.quarkiverse.idempotency.runtime.Outcome;
import io.smallrye.reactive.messaging.TracingMetadata;

/**
 * Each delivery's outcome as a span {@code <channel> idempotency}: a child of the span its connector opened for the
 * message (SmallRye Reactive Messaging's consumer span, which the connector ends as the message arrives), from the
 * delivery's start to its end, with the outcome and what explains it. A message that never became a delivery (no
 * key, an unreadable payload) gets one too. Registered only when the application has OpenTelemetry tracing.
 */
@Singleton
public class OpenTelemetryDeliveryTracing implements DeliveryTracing {

    /** The outcome, as the metrics tag it: handled, duplicate, busy, retried, dead-lettered, store-error... */
    public static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("messaging.idempotency.outcome");
    /** The {@code @Incoming} channel. */
    public static final AttributeKey<String> CHANNEL = AttributeKey.stringKey("messaging.idempotency.channel");
    /** The key as the store keeps it: {@code scope:key}, a digest under {@code key-storage=digest}. */
    public static final AttributeKey<String> KEY = AttributeKey.stringKey("messaging.idempotency.key");
    /** A duplicate's origin: redelivery, republish, takeover or unknown. */
    public static final AttributeKey<String> ORIGIN = AttributeKey.stringKey("messaging.idempotency.duplicate.origin");
    /** The failed attempt's number, counting from 1. */
    public static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("messaging.idempotency.attempt");
    /** The attempt budget. */
    public static final AttributeKey<Long> MAX_ATTEMPTS = AttributeKey.longKey("messaging.idempotency.max_attempts");
    /** Why the message was dead-lettered: its dead-letter reason header's text. */
    public static final AttributeKey<String> REASON = AttributeKey.stringKey("messaging.idempotency.dead_letter.reason");

    private final Tracer tracer;

    @Inject
    public OpenTelemetryDeliveryTracing(OpenTelemetry openTelemetry) {
        this.tracer = openTelemetry.getTracer("io.quarkiverse.idempotency");
    }

    @Override
    public void ended(DeliveryView delivery, Throwable cause) {
        DeliveryState state = delivery.state();
        long elapsed = System.nanoTime() - delivery.target().startedNanos();
        SpanBuilder builder = span(delivery.target().channel(), state.outcome(), delivery.target().metadata())
                .setStartTimestamp(epochNanos() - elapsed, TimeUnit.NANOSECONDS)
                .setAttribute(KEY, delivery.key().toString());
        if (delivery.duplicateOrigin() != null) {
            builder.setAttribute(ORIGIN, delivery.duplicateOrigin().tag());
        }
        IdempotencyException answer = delivery.answer();
        if (answer instanceof HandlerFailedException failed) {
            builder.setAttribute(ATTEMPT, (long) failed.attempt()).setAttribute(MAX_ATTEMPTS, (long) failed.maxAttempts());
        } else if (answer instanceof AttemptsExhaustedException spent) {
            builder.setAttribute(ATTEMPT, (long) spent.attempts())
                    .setAttribute(MAX_ATTEMPTS, (long) delivery.target().policy().retry().maxAttempts());
        }
        end(builder, state.outcome(), answer == null ? null : answer.getMessage(), cause);
    }

    @Override
    public void rejected(String channel, Outcome outcome, Metadata metadata, String reason, Throwable cause) {
        end(span(channel, outcome, metadata), outcome, reason, cause);
    }

    private SpanBuilder span(String channel, Outcome outcome, Metadata metadata) {
        return tracer.spanBuilder(channel + " idempotency").setSpanKind(SpanKind.INTERNAL).setParent(parent(metadata))
                .setAttribute(CHANNEL, channel).setAttribute(OUTCOME, outcome.tag());
    }

    private static void end(SpanBuilder builder, Outcome outcome, String reason, Throwable cause) {
        boolean deadLettered = outcome == Outcome.DEAD_LETTERED || outcome == Outcome.PAYLOAD_MISMATCH
                || outcome == Outcome.KEY_MISSING || outcome == Outcome.UNREADABLE;
        if (deadLettered && reason != null) {
            builder.setAttribute(REASON, reason);
        }
        Span span = builder.startSpan();
        if (cause != null) {
            span.recordException(cause);
        }
        if (deadLettered || outcome == Outcome.STORE_FAILED || outcome == Outcome.UNCONFIRMED) {
            span.setStatus(StatusCode.ERROR, outcome.tag());
        }
        span.end();
    }

    /** The message's context as its connector traced it, else the current one. */
    private static Context parent(Metadata metadata) {
        if (metadata != null) {
            TracingMetadata tracing = metadata.get(TracingMetadata.class).orElse(null);
            if (tracing != null && tracing.getCurrentContext() != null) {
                return tracing.getCurrentContext();
            }
        }
        return Context.current();
    }

    private static long epochNanos() {
        java.time.Instant now = java.time.Instant.now();
        return TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano();
    }
}
