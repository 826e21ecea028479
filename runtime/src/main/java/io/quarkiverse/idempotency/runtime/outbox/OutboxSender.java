package io.quarkiverse.idempotency.runtime.outbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;

import io.quarkiverse.idempotency.runtime.IdempotencyLogger;

/**
 * Sends outbox rows through their channels, for the fast path and the relay alike: hands them over in the order they
 * were written, keeps the leases of those waiting for their broker's confirm renewed, deletes the confirmed ones in
 * shared statements, and records the failed ones for a retry. Every change to a row is fenced by its lease as this
 * instance knows it.
 */
final class OutboxSender {

    // the outbox's category, which operators set levels for
    private static final IdempotencyLogger LOG = IdempotencyLogger.of(Outbox.class);
    /**
     * How long a sent row waits for others to share its DELETE: at 2,500 messages a second, some 50 rows a statement
     * instead of the few that confirmed while the last one ran. A row waits leased to this instance, far within its
     * lease, and a stop in between leaves it to be sent again, under its id.
     */
    private static final long DELETE_WAIT_MILLIS = 20;
    /**
     * How many leases long a sending may wait for its confirm while its lease is renewed: a connector that never
     * answers must not hold its row, and the rows after it, for ever. Past this, the row is sent again after its lease.
     */
    private static final int LONGEST_WAIT_IN_LEASES = 10;

    private final OutboxTable table;
    private final OutboxSettings settings;
    private final Executor worker;
    /** The worker after a short wait: the rows confirmed meanwhile share one DELETE and its commit. */
    private final Executor deleter;
    private final Map<String, ChannelOutbox<?>> channels;
    private final OutboxCounters counters;
    /** Rows confirmed and not deleted yet, each with its lease's end as this instance knows it. */
    private final ConcurrentLinkedQueue<Map.Entry<Long, Long>> sent = new ConcurrentLinkedQueue<>();
    /** Rows handed to their channel and not confirmed or refused yet, by id: their leases are renewed meanwhile. */
    private final Map<Long, InFlight> inFlight = new ConcurrentHashMap<>();
    private final AtomicBoolean deleting = new AtomicBoolean();
    private final Object renewals = new Object();
    private volatile LongConsumer confirmed = nanos -> {
    };

    OutboxSender(OutboxTable table, OutboxSettings settings, Executor worker, Map<String, ChannelOutbox<?>> channels,
            OutboxCounters counters) {
        this.table = table;
        this.settings = settings;
        this.worker = worker;
        this.deleter = CompletableFuture.delayedExecutor(DELETE_WAIT_MILLIS, TimeUnit.MILLISECONDS, worker);
        this.channels = channels;
        this.counters = counters;
    }

    /** @param listener told the nanoseconds from each message's sending to its broker confirm */
    void onConfirmed(LongConsumer listener) {
        this.confirmed = listener;
    }

    /**
     * Hands rows to their channels in the order they were written. At the first the channel does not take (its buffer
     * full, no subscriber yet), that row and those after it are left to the relay, due together after a retry delay:
     * none is sent before the ones written before it.
     *
     * @param leaseSet when the rows' leases were set ({@link System#nanoTime()}, at the latest): renewed from then on
     * @return for each row handed to its channel, completed with whether the broker confirmed it
     */
    List<CompletableFuture<Boolean>> sendInOrder(List<OutboxRow> rows, long leaseSet) {
        List<CompletableFuture<Boolean>> sending = new ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            OutboxRow row = rows.get(i);
            long started = System.nanoTime();
            InFlight flight = hand(row, leaseSet);
            Throwable notTaken = notTaken(flight.sending);
            if (notTaken != null) {
                List<Map.Entry<Long, Long>> leases = new ArrayList<>(rows.size() - i);
                leases.add(Map.entry(row.id(), flight.settle(inFlight, notTaken)));
                rows.subList(i + 1, rows.size()).forEach(next -> leases.add(Map.entry(next.id(), next.leasedUntil())));
                counters.failures.increment();
                // the channel busy is no refusal by the broker: not logged, retried all the same
                worker.execute(() -> recordFailure(row, leases, notTaken, false));
                break;
            }
            flight.taken();
            sending.add(whenSent(flight, started));
        }
        return sending;
    }

    /** @return the sending of a row's message, begun (in flight), or failed when its channel or payload is missing */
    private InFlight hand(OutboxRow row, long leaseSet) {
        ChannelOutbox<?> channel = channels.get(row.channel());
        if (channel == null) {
            return new InFlight(row, leaseSet, CompletableFuture.failedFuture(new IllegalStateException("No outbox"
                    + " channel '" + row.channel() + "' in this application")));
        }
        Object payload = row.payload();
        if (payload instanceof OutboxTable.StoredPayload stored) {
            try {
                payload = OutboxPayloads.decode(stored.kind(), stored.bytes());
            } catch (RuntimeException e) {
                return new InFlight(row, leaseSet, CompletableFuture.failedFuture(e));
            }
        }
        CompletableFuture<Void> sending = new CompletableFuture<>();
        InFlight flight = new InFlight(row, leaseSet, sending);
        inFlight.put(row.id(), flight);
        try {
            channel.relay(row, payload).whenComplete((ok, failure) -> {
                if (failure == null) {
                    sending.complete(null);
                } else {
                    sending.completeExceptionally(failure);
                }
            });
        } catch (RuntimeException e) {
            sending.completeExceptionally(e); // settled as a refusal: no entry left in flight
        }
        return flight;
    }

    /** @return why the channel did not take a message, or {@code null} when it did (or the broker answered) */
    private static Throwable notTaken(CompletableFuture<Void> handed) {
        if (!handed.isCompletedExceptionally()) {
            return null;
        }
        try {
            handed.join();
            return null;
        } catch (RuntimeException e) {
            Throwable cause = unwrap(e);
            return cause instanceof ChannelOutbox.NotSent ? cause : null;
        }
    }

    /** @return completed with whether the message was confirmed (a failure is recorded on its row, and counted) */
    private CompletableFuture<Boolean> whenSent(InFlight flight, long started) {
        OutboxRow row = flight.row;
        boolean relay = row.payload() instanceof OutboxTable.StoredPayload;
        return flight.sending.handle((ok, failure) -> {
            long lease = flight.settle(inFlight, failure);
            if (failure == null) {
                confirmed.accept(System.nanoTime() - started);
                (relay ? counters.relayed : counters.sentAtOnce).increment();
                confirmedAt(row.id(), lease);
                return true;
            }
            counters.failures.increment();
            worker.execute(() -> recordFailure(row, List.of(Map.entry(row.id(), lease)), failure, true));
            return false;
        });
    }

    private void confirmedAt(long id, long lease) {
        sent.add(Map.entry(id, lease));
        deleteSent();
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                ? failure.getCause()
                : failure;
    }

    // the row failed, and the rows after it that follow it (their leases first)
    private void recordFailure(OutboxRow row, List<Map.Entry<Long, Long>> leases, Throwable failure, boolean log) {
        Duration retryIn = settings.retryDelay(row.attempts(), ThreadLocalRandom.current().nextDouble());
        String error = String.valueOf(unwrap(failure));
        if (log) {
            LOG.outboxSendFailedAt(row.channel(), row.messageId(), row.attempts() + 1, error, retryIn.toMillis());
        }
        try {
            table.failed(leases, error.length() > 2000 ? error.substring(0, 2000) : error, retryIn);
        } catch (RuntimeException e) {
            // the rows keep their lease, and are sent again when it runs out
            LOG.outboxNotRecorded(row.messageId(), e.getMessage());
        }
    }

    /** Deletes the sent rows on a worker thread, one statement for all those confirmed meanwhile. */
    private void deleteSent() {
        if (deleting.compareAndSet(false, true)) {
            deleter.execute(() -> {
                try {
                    deleteConfirmed();
                } finally {
                    deleting.set(false);
                }
                if (!sent.isEmpty()) {
                    deleteSent();
                }
            });
        }
    }

    /** Deletes every row confirmed so far, a batch a statement, on the caller's thread. */
    synchronized void deleteConfirmed() {
        while (true) {
            Map<Long, Long> leases = new HashMap<>();
            for (Map.Entry<Long, Long> row; leases.size() < settings.batchSize() && (row = sent.poll()) != null;) {
                // a row confirmed while its lease was renewed comes twice: the renewed lease, the later, is the row's
                leases.merge(row.getKey(), row.getValue(), Math::max);
            }
            if (leases.isEmpty()) {
                return;
            }
            try {
                table.deleteSent(leases);
            } catch (RuntimeException e) {
                // sent again after their lease, with the same ids: downstream consumers drop the copies
                LOG.outboxNotDeleted(leases.size(), e.getMessage());
            }
        }
    }

    /**
     * A row handed to its channel: its sending, its lease's end as last set (microseconds since the epoch, as the table
     * holds it), when that lease was set at the latest, and when it was handed ({@link System#nanoTime()}); once settled,
     * how its sending ended. Settling and a renewal's new lease meet under its lock, so that a renewal that ran while the
     * sending was settled still fences the row's delete or failure with the lease the row has now.
     */
    private static final class InFlight {
        final OutboxRow row;
        final CompletableFuture<Void> sending;
        final long handed = System.nanoTime();
        long leasedUntil;
        long leaseSet;
        boolean settled;
        /** Whether its channel took it: until then a renewal leaves it alone (the hand-over decides its fate). */
        boolean taken;
        Throwable failure;

        InFlight(OutboxRow row, long leaseSet, CompletableFuture<Void> sending) {
            this.row = row;
            this.leasedUntil = row.leasedUntil();
            this.leaseSet = leaseSet;
            this.sending = sending;
        }

        synchronized void taken() {
            taken = true;
        }

        synchronized boolean renewable(long now, long after) {
            return taken && !settled && now - leaseSet > after;
        }

        /** @return the lease its delete or failure is fenced with; it is no longer in flight */
        synchronized long settle(Map<Long, InFlight> inFlight, Throwable failure) {
            settled = true;
            this.failure = failure;
            inFlight.remove(row.id(), this);
            return leasedUntil;
        }

        /** @return whether it is still in flight, then with this lease; otherwise it settled with the lease before */
        synchronized boolean renewed(long until, long now) {
            if (settled) {
                return false;
            }
            leasedUntil = until;
            leaseSet = now;
            return true;
        }

        synchronized long leasedUntil() {
            return leasedUntil;
        }

        synchronized long leaseSet() {
            return leaseSet;
        }
    }

    /**
     * Renews the leases of rows waiting for their confirm for more than a quarter of their lease, so that no relay
     * claims them meanwhile; each relay run does it, before each batch. A row whose lease another sender holds now, or
     * that waited longer than {@value #LONGEST_WAIT_IN_LEASES} leases, is no longer renewed.
     */
    void renewInFlight() {
        if (inFlight.isEmpty()) {
            return;
        }
        // one renewal at a time (the relay job, the Dev UI's "send now"): a second with the leases before the first's
        // would find them changed, and stop renewing sendings still on their way
        synchronized (renewals) {
            renewInFlightNow();
        }
    }

    private void renewInFlightNow() {
        long now = System.nanoTime();
        long lease = settings.lease().toNanos();
        Map<Long, InFlight> due = new HashMap<>();
        inFlight.forEach((id, flight) -> {
            if (now - flight.handed > LONGEST_WAIT_IN_LEASES * lease) {
                if (inFlight.remove(id, flight)) {
                    LOG.outboxUnconfirmed(id, (now - flight.handed) / 1_000_000_000);
                }
            } else if (flight.renewable(now, lease / 4)) {
                due.put(id, flight);
            }
        });
        if (due.isEmpty()) {
            return;
        }
        Map<Long, Long> leases = new HashMap<>();
        due.forEach((id, flight) -> leases.put(id, flight.leasedUntil()));
        Map<Long, Long> renewed;
        try {
            renewed = table.renew(leases, settings.lease());
        } catch (RuntimeException e) {
            LOG.outboxRelayFailed(e.getMessage()); // tried again at the next run, well within the lease
            return;
        }
        due.forEach((id, flight) -> {
            Long until = renewed.get(id);
            if (until == null) {
                inFlight.remove(id, flight); // claimed by another sender since, or confirmed and deleted
            } else if (!flight.renewed(until, now)) {
                // settled while the renewal ran: its delete or failure used the lease before, which no longer matches
                if (flight.failure == null) {
                    confirmedAt(id, until);
                } else {
                    worker.execute(() -> recordFailure(flight.row, List.of(Map.entry(id, until)), flight.failure,
                            false));
                }
            }
        });
    }
}
