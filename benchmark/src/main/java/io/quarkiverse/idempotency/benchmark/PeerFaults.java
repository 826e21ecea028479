package io.quarkiverse.idempotency.benchmark;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkus.narayana.jta.QuarkusTransaction;

/**
 * Each consumer's idempotency under the two faults the contract is about, run against the same database: a
 * concurrent duplicate (a second delivery of a key while the first is still being handled: does it run twice, wait,
 * throw, or get answered at once?) and a crash between taking the key and the work's commit (is the redelivery
 * handled, or skipped as a duplicate, losing the message?). A crash is what the database sees of one: the work's
 * transaction rolled back, the consumer gone without another word.
 */
final class PeerFaults {

    /** How long the first delivery holds the key while the duplicate arrives. */
    static final Duration HOLD = Duration.ofMillis(1_500);

    /** What one consumer's idempotency does under both faults. */
    record Outcome(String consumer, String concurrentDuplicate, String crash) {
    }

    /** One consumer's way of taking a key for a delivery; answers whether the delivery is to be handled. */
    interface Taker {
        /**
         * Takes the key inside the delivery's work; {@code inWork} runs while it holds the key, in the work's
         * transaction when there is one, and decides (by throwing) whether the work commits.
         */
        boolean deliver(String key, Runnable inWork);
    }

    private final Peers peers;
    private final DatabaseIdempotencyStore store;

    PeerFaults(Peers peers, DatabaseIdempotencyStore store) {
        this.peers = peers;
        this.store = store;
    }

    List<Outcome> run() throws Exception {
        return List.of(
                probe("@Idempotent (in-transaction mode)", this::extension),
                probe("Camel JdbcMessageIdRepository", key -> camel(peers.camel, key)),
                probe("Camel JdbcOrphanLockAwareIdempotentRepository", key -> camel(peers.camelOrphanLock, key)),
                probe("Spring Integration JdbcMetadataStore", this::spring));
    }

    private Outcome probe(String name, Function<String, Taker> takers) throws Exception {
        return new Outcome(name, concurrentDuplicate(takers.apply("dup-" + UUID.randomUUID())),
                crash(takers.apply("crash-" + UUID.randomUUID())));
    }

    private static String concurrentDuplicate(Taker taker) throws Exception {
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(() -> taker.deliver("k", () -> {
            holding.countDown();
            await(release);
        }));
        if (!holding.await(10, TimeUnit.SECONDS)) {
            return "the first delivery never got the key";
        }
        long start = System.nanoTime();
        CompletableFuture<Boolean> second = CompletableFuture.supplyAsync(() -> taker.deliver("k", () -> {
        }));
        String outcome;
        try {
            Boolean handled = second.get(HOLD.toMillis(), TimeUnit.MILLISECONDS);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            outcome = handled ? "runs twice (answered in " + millis + " ms)"
                    : "told at once that it is taken (" + millis + " ms)";
            release.countDown();
        } catch (java.util.concurrent.TimeoutException waiting) {
            release.countDown();
            try {
                Boolean handled = second.get(30, TimeUnit.SECONDS);
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                outcome = "waits for the first to commit (" + millis + " ms, a thread and a connection held), then "
                        + (handled ? "runs too" : "is skipped");
            } catch (java.util.concurrent.ExecutionException e) {
                outcome = "waits, then throws " + e.getCause();
            }
        } catch (java.util.concurrent.ExecutionException e) {
            release.countDown();
            outcome = "throws " + e.getCause();
        }
        first.get(30, TimeUnit.SECONDS);
        return outcome;
    }

    private static String crash(Taker taker) {
        try {
            taker.deliver("k", () -> {
                throw new Crash();
            });
        } catch (RuntimeException expected) {
            // the consumer is gone (its transaction rolled back; nothing else ran)
        }
        return taker.deliver("k", () -> {
        }) ? "the redelivery is handled" : "the redelivery is skipped as a duplicate: the message is lost";
    }

    // ---- the consumers, as the benchmark's consumers use them

    private Taker extension(String prefix) {
        return (key, inWork) -> QuarkusTransaction.requiringNew().call(() -> {
            ClaimResult result = store.claimInTransaction(new ScopedKey("faults", prefix + key), "faults",
                    Duration.ofHours(1)).result();
            if (!result.claimed()) {
                return false;
            }
            inWork.run();
            return true;
        });
    }

    private static Taker camel(org.apache.camel.spi.IdempotentRepository repository, String prefix) {
        return (key, inWork) -> {
            if (!repository.add(prefix + key)) {
                return false;
            }
            // the work in its own transaction; a crash leaves the added key as it is (no remove ever runs)
            QuarkusTransaction.requiringNew().run(inWork);
            repository.confirm(prefix + key);
            return true;
        };
    }

    private Taker spring(String prefix) {
        return (key, inWork) -> QuarkusTransaction.requiringNew().call(() -> {
            if (peers.spring.putIfAbsent(prefix + key, "1") != null) {
                return false;
            }
            inWork.run();
            return true;
        });
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The consumer dying in the middle of its work. */
    private static final class Crash extends RuntimeException {
        Crash() {
            super("killed", null, false, false);
        }
    }
}
