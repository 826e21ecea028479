package io.quarkiverse.idempotency.runtime.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.junit.jupiter.api.Test;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;

/**
 * The creation of partitions that every writer needing one joins ({@link Partitions#createAhead}), answered later as
 * through the reactive client: a caller that stops waiting (its delivery cancelled, a timeout) stops neither the
 * creation nor the others' wait, and the next creation can start once it ends.
 */
class PartitionsCreationTest {

    /** Each creation's transaction, answered when the test says: the end of the last partition it made. */
    private final List<CompletableFuture<Instant>> transactions = new ArrayList<>();
    /** Whether the next transaction fails before it starts (no connection to be had, say), thrown at once. */
    private boolean throwing;

    private final Partitions partitions = new Partitions(new SqlSessions() {
        @Override
        @SuppressWarnings("unchecked")
        public <T> Uni<T> inTransaction(Function<SqlCalls, Uni<T>> work, String failure) {
            if (throwing) {
                throwing = false;
                throw new IllegalStateException("no connection");
            }
            CompletableFuture<Instant> transaction = new CompletableFuture<>();
            transactions.add(transaction);
            return Uni.createFrom().completionStage(transaction).map(end -> (T) end);
        }

        @Override
        public <T> Uni<T> onConnection(Function<SqlCalls, Uni<T>> work, String failure) {
            throw new UnsupportedOperationException();
        }
    }, "keys", Duration.ofSeconds(2), Duration.ofSeconds(10));

    @Test
    void theFirstCallerCancellingLeavesTheCreationToFinishForTheNextCallers() throws Exception {
        Cancellable first = partitions.createAhead().subscribe().with(created -> {
        });
        assertEquals(1, transactions.size());
        first.cancel();
        CompletableFuture<Integer> second = partitions.createAhead().subscribeAsCompletionStage();
        assertEquals(1, transactions.size(), "joined the creation under way");

        transactions.get(0).complete(Instant.now().plusSeconds(3600));
        second.get(5, TimeUnit.SECONDS);
        assertTrue(partitions.covers(Duration.ofSeconds(10)), "its partitions known once it committed");

        // and the next creation starts: nothing is left waiting on the first one
        partitions.createAhead().subscribeAsCompletionStage();
        assertEquals(2, transactions.size());
    }

    @Test
    void aJoinerCancellingDoesNotFailTheOthers() throws Exception {
        CompletableFuture<Integer> first = partitions.createAhead().subscribeAsCompletionStage();
        Cancellable joiner = partitions.createAhead().subscribe().with(created -> {
        });
        joiner.cancel();
        CompletableFuture<Integer> third = partitions.createAhead().subscribeAsCompletionStage();
        assertEquals(1, transactions.size());

        transactions.get(0).complete(Instant.now().plusSeconds(3600));
        first.get(5, TimeUnit.SECONDS);
        third.get(5, TimeUnit.SECONDS);
        assertFalse(first.isCompletedExceptionally());
    }

    @Test
    void aCreationThatFailsAtOnceLeavesNothingBehind() throws Exception {
        throwing = true;
        CompletableFuture<Integer> first = partitions.createAhead().subscribeAsCompletionStage();
        assertTrue(first.isCompletedExceptionally());
        CompletableFuture<Integer> next = partitions.createAhead().subscribeAsCompletionStage();
        assertEquals(1, transactions.size(), "the next creation started");
        transactions.get(0).complete(Instant.now().plusSeconds(3600));
        next.get(5, TimeUnit.SECONDS);
    }

    @Test
    void aFailedCreationFailsItsCallersAndTheNextOneStartsAfresh() {
        CompletableFuture<Integer> first = partitions.createAhead().subscribeAsCompletionStage();
        transactions.get(0).completeExceptionally(new IllegalStateException("lock timeout"));
        assertTrue(first.isCompletedExceptionally());
        assertFalse(partitions.covers(Duration.ofSeconds(10)));
        partitions.createAhead().subscribeAsCompletionStage();
        assertEquals(2, transactions.size());
    }
}
