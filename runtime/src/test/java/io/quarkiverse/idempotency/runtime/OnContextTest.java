package io.quarkiverse.idempotency.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

class OnContextTest {

    private static Vertx vertx;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stop() {
        vertx.close();
    }

    @Test
    void theOutcomeComesBackOnTheMessagesContext() throws Exception {
        Context context = vertx.getOrCreateContext();
        CompletableFuture<Boolean> onIt = new CompletableFuture<>();
        OnContext.resume(Uni.createFrom().item("x").emitOn(Runnable::run), context).subscribe()
                .with(item -> onIt.complete(Vertx.currentContext() == context));
        assertTrue(onIt.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aClaimKeepsGoingWhenItsDeliveryIsGivenUpSoThatItsAnswerIsSeen() {
        AtomicBoolean cancelled = new AtomicBoolean();
        Uni<String> claim = Uni.createFrom().<String> emitter(e -> {
        }).onCancellation().invoke(() -> cancelled.set(true));
        Cancellable delivery = OnContext.resume(claim, vertx.getOrCreateContext(), false).subscribe().with(ignored -> {
        });
        delivery.cancel();
        assertFalse(cancelled.get(), "the claim's answer will still arrive, and a claim got then is released");

        AtomicBoolean settleCancelled = new AtomicBoolean();
        Uni<String> settle = Uni.createFrom().<String> emitter(e -> {
        }).onCancellation().invoke(() -> settleCancelled.set(true));
        OnContext.resume(settle, vertx.getOrCreateContext()).subscribe().with(ignored -> {
        }).cancel();
        assertEquals(true, settleCancelled.get(), "anything else is cancelled with its delivery");
    }
}
