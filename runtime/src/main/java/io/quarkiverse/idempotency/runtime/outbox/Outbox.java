package io.quarkiverse.idempotency.runtime.outbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;

import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

import org.eclipse.microprofile.config.ConfigProvider;

import io.quarkiverse.idempotency.runtime.EnlistRefusal;
import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkiverse.idempotency.runtime.StoreMisconfiguredException;
import io.quarkiverse.idempotency.runtime.WorkerId;

/**
 * The transactional outbox: writes each message in the sender's transaction, sends the messages of a transaction just
 * after it committed (the fast path), and relays rows left unsent (a crash, a broker that refused or did not answer)
 * on a lease. A sent row is deleted once the broker confirmed it; a refused one is retried with a growing delay, its
 * failures counted on the row.
 */
public class Outbox {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(Outbox.class);
    /** SmallRye's in-memory connector, for tests: its messages are acknowledged as they arrive, and carry no id. */
    private static final String IN_MEMORY = "smallrye-in-memory";
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
    private final TransactionSynchronizationRegistry transactions;
    private final String owner;
    private final OutboxSettings settings;
    private final Executor worker;
    /** The worker after a short wait: the rows confirmed meanwhile share one DELETE and its commit. */
    private final Executor deleter;
    private final Iterable<OutgoingIds> connectors;
    private final Map<String, ChannelOutbox<?>> channels = new ConcurrentHashMap<>();
    /** Rows confirmed and not deleted yet, each with its lease's end as this instance knows it. */
    private final ConcurrentLinkedQueue<Map.Entry<Long, Long>> sent = new ConcurrentLinkedQueue<>();
    /** Rows handed to their channel and not confirmed or refused yet, by id: their leases are renewed meanwhile. */
    private final Map<Long, InFlight> inFlight = new ConcurrentHashMap<>();
    private final AtomicBoolean deleting = new AtomicBoolean();
    private final OutboxCounts counts = new OutboxCounts();
    /**
     * Rows this instance wrote and then gave up sending at once (the durability of their commit could not be learnt,
     * the database being down, or they waited past half their lease), by id: the relay takes them at its next run
     * instead of after their lease.
     */
    private final Map<Long, GivenUp> givenUp = new ConcurrentHashMap<>();
    private volatile OutboxBacklog lastBacklog = OutboxBacklog.NONE;
    private volatile LongConsumer confirmed = nanos -> {
    };

    Outbox(OutboxTable table, TransactionSynchronizationRegistry transactions, WorkerId worker,
            OutboxSettings settings, Executor executor, Iterable<OutgoingIds> connectors) {
        this.connectors = connectors;
        this.table = table;
        this.transactions = transactions;
        this.owner = worker.value();
        this.settings = settings;
        this.worker = executor;
        this.deleter = CompletableFuture.delayedExecutor(DELETE_WAIT_MILLIS, TimeUnit.MILLISECONDS, executor);
    }

    OutboxTable table() {
        return table;
    }

    /**
     * Takes a channel's outbox as SmallRye wires it: its connector's way of carrying ids, and the check that the
     * connector acknowledges a message only once the broker confirmed it.
     *
     * @throws StoreMisconfiguredException when it would not: the application does not start
     */
    void register(ChannelOutbox<?> channel) {
        String connector = ConfigProvider.getConfig()
                .getOptionalValue("mp.messaging.outgoing." + channel.channel() + ".connector", String.class)
                .orElse(null);
        OutgoingIds known = null;
        for (OutgoingIds ids : connectors) {
            if (ids.connector().equals(connector)) {
                known = ids;
            }
        }
        if (known == null && !IN_MEMORY.equals(connector)) {
            throw new StoreMisconfiguredException("Outbox channel '" + channel.channel() + "' is on connector '"
                    + connector + "', whose acknowledgement and message id the outbox does not know: it sends to"
                    + " smallrye-rabbitmq and smallrye-kafka channels. Use a plain Emitter for this channel", null);
        }
        if (known != null) {
            String unsafe = known.unconfirmed(channel.channel());
            if (unsafe != null) {
                throw new StoreMisconfiguredException("Outbox channel '" + channel.channel()
                        + "' would lose messages: " + unsafe, null);
            }
            channel.idsBy(known.stamp(channel.channel()));
        }
        channels.put(channel.channel(), channel);
    }

    /** @return the channels the outbox sends to */
    public Set<String> channelNames() {
        return Set.copyOf(channels.keySet());
    }

    Map<String, ChannelOutbox<?>> channels() {
        return channels;
    }

    /** Writes a message in the caller's transaction; sent once the transaction has committed. */
    String write(ChannelOutbox<?> channel, Object payload, String givenId, String key) {
        int status = transactions.getTransactionStatus();
        if (status != Status.STATUS_ACTIVE) {
            throw new IllegalStateException("The outbox of channel '" + channel.channel() + "' writes in the caller's"
                    + " transaction, and there is " + (status == Status.STATUS_NO_TRANSACTION ? "none"
                            : "none active (status " + status + ")")
                    + ": the message is not sent. Send it from a @Transactional method (on the datasource of the"
                    + " idempotency keys), or through a plain Emitter if it needs no outbox");
        }
        String messageId = givenId != null ? givenId : UUID.randomUUID().toString();
        byte[] stored = OutboxPayloads.encode(payload);
        OutboxTable.Written written;
        try {
            written = table.insert(messageId, channel.channel(), key, OutboxPayloads.kind(payload), stored, owner,
                    settings.lease());
        } catch (RuntimeException e) {
            if (EnlistRefusal.in(e)) {
                // without its cause: the refusal is the sender's to fix, not a sign that the keys live apart
                throw new IllegalStateException("The outbox of channel '" + channel.channel() + "' writes on the"
                        + " datasource of the idempotency keys, and the sender's transaction already holds another"
                        + " datasource: the message is not sent. Send it from a transaction on the keys' datasource ("
                        + e.getMessage() + ")");
            }
            throw e;
        }
        AfterCommit pending = pending();
        if (pending.rows.isEmpty()) {
            pending.firstWritten = System.nanoTime();
        }
        pending.rows.add(new OutboxRow(written.id(), messageId, channel.channel(), key, payload, 0,
                written.leasedUntil()));
        pending.asynchronousCommit |= written.asynchronousCommit();
        return messageId;
    }

    private AfterCommit pending() {
        AfterCommit pending = (AfterCommit) transactions.getResource(AfterCommit.class);
        if (pending == null) {
            pending = new AfterCommit();
            transactions.putResource(AfterCommit.class, pending);
            transactions.registerInterposedSynchronization(pending);
        }
        return pending;
    }

    /** The messages one transaction wrote, sent when it commits, forgotten when it rolls back. */
    private final class AfterCommit implements Synchronization {
        final List<OutboxRow> rows = new ArrayList<>(2);
        /** Whether the transaction's commit returns before it is durable: then sent once the WAL is flushed. */
        boolean asynchronousCommit;
        /** When its first row was written: the rows' leases run from then. */
        long firstWritten;

        @Override
        public void beforeCompletion() {
        }

        @Override
        public void afterCompletion(int status) {
            if (status != Status.STATUS_COMMITTED) {
                return;
            }
            if (!asynchronousCommit) {
                sendAll();
                counts.afterCommitsHandled.increment();
                return;
            }
            // a message must not announce work that a database crash in the next milliseconds would undo: once the
            // WAL is flushed, only the rows still there are sent (a flush that succeeds on a restarted server proves
            // nothing about a commit the crash lost)
            worker.execute(() -> {
                try {
                    Set<Long> kept = table.durable(rows);
                    rows.removeIf(row -> !kept.contains(row.id()));
                    sendAll();
                } catch (RuntimeException e) {
                    LOG.outboxNotDurableAt(e.getMessage(), rows.size()); // the rows, if they survived, are relayed
                    giveUp();
                } finally {
                    counts.afterCommitsHandled.increment();
                }
            });
        }

        // Left to the relay, which takes them at its next run: they are still leased to this instance.
        private void giveUp() {
            forgetGivenUpPastTheirLease(); // also when no relay runs
            long leaseEnds = firstWritten + settings.lease().toNanos();
            for (OutboxRow row : rows) {
                givenUp.put(row.id(), new GivenUp(leaseEnds, row.leasedUntil()));
            }
        }

        private void sendAll() {
            // past half its lease, a row may be claimed by a relay before its sending is confirmed: the relay sends it
            if (System.nanoTime() - firstWritten > settings.lease().toNanos() / 2) {
                giveUp();
                return;
            }
            sendInOrder(rows, firstWritten);
        }
    }

    /**
     * Hands rows to their channels in the order they were written. At the first the channel does not take (its buffer
     * full, no subscriber yet), that row and those after it are left to the relay, due together after a retry delay:
     * none is sent before the ones written before it.
     *
     * @param leaseSet when the rows' leases were set ({@link System#nanoTime()}, at the latest): renewed from then on
     * @return for each row handed to its channel, completed with whether the broker confirmed it
     */
    private List<CompletableFuture<Boolean>> sendInOrder(List<OutboxRow> rows, long leaseSet) {
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
                counts.failures.increment();
                // the channel busy is no refusal by the broker: not logged, retried all the same
                worker.execute(() -> recordFailure(row, leases, notTaken, false));
                break;
            }
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
        channel.relay(row, payload).whenComplete((ok, failure) -> {
            if (failure == null) {
                sending.complete(null);
            } else {
                sending.completeExceptionally(failure);
            }
        });
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
                (relay ? counts.relayed : counts.sentAtOnce).increment();
                confirmedAt(row.id(), lease);
                return true;
            }
            counts.failures.increment();
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
                    drainSent();
                } finally {
                    deleting.set(false);
                }
                if (!sent.isEmpty()) {
                    deleteSent();
                }
            });
        }
    }

    // Deletes every row confirmed so far, a batch a statement.
    private synchronized void drainSent() {
        while (true) {
            Map<Long, Long> leases = new HashMap<>();
            for (Map.Entry<Long, Long> row; leases.size() < settings.batchSize() && (row = sent.poll()) != null;) {
                leases.put(row.getKey(), row.getValue());
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
        Throwable failure;

        InFlight(OutboxRow row, long leaseSet, CompletableFuture<Void> sending) {
            this.row = row;
            this.leasedUntil = row.leasedUntil();
            this.leaseSet = leaseSet;
            this.sending = sending;
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
        long now = System.nanoTime();
        long lease = settings.lease().toNanos();
        Map<Long, InFlight> due = new HashMap<>();
        inFlight.forEach((id, flight) -> {
            if (now - flight.handed > LONGEST_WAIT_IN_LEASES * lease) {
                if (inFlight.remove(id, flight)) {
                    LOG.outboxUnconfirmed(id, (now - flight.handed) / 1_000_000_000);
                }
            } else if (now - flight.leaseSet() > lease / 4) {
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

    /**
     * Sends the rows whose lease has run out (left by a crash, refused by the broker, or written by an instance that is
     * gone), batch after batch, each awaited within its lease.
     *
     * @return how many rows it claimed
     */
    public int relayDue() {
        counts.relayRunsStarted.increment();
        try {
            return relayEachBatch();
        } finally {
            counts.relayRunsEnded.increment();
        }
    }

    private int relayEachBatch() {
        if (channels.isEmpty()) {
            return 0;
        }
        int claimed = 0;
        Map<Long, Long> ours = givenUpStillLeased();
        while (true) {
            // also between batches: a long run must not let the leases of earlier sendings run out
            renewInFlight();
            long leaseSet = System.nanoTime();
            List<OutboxRow> rows = table.claimDue(owner, settings.lease(), settings.batchSize(), channels.keySet(),
                    ours);
            forgetGivenUp(rows);
            ours = Map.of();
            claimed += rows.size();
            List<CompletableFuture<Boolean>> sending = sendInOrder(rows, leaseSet);
            boolean allConfirmed;
            try {
                // a quarter of the lease: the rows still unconfirmed then stay leased to this instance, renewed by the
                // next runs, and no relay claims a row after them meanwhile
                CompletableFuture.allOf(sending.toArray(CompletableFuture[]::new))
                        .get(settings.lease().toMillis() / 4, TimeUnit.MILLISECONDS);
                allConfirmed = sending.size() == rows.size() && sending.stream().allMatch(CompletableFuture::join);
            } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
                return claimed;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return claimed;
            }
            // another batch only while the broker takes every message: a refused one waits for its retry delay; the
            // confirmed ones deleted first, as they would hold the next claim back
            drainSent();
            if (rows.size() < settings.batchSize() || !allConfirmed) {
                return claimed;
            }
        }
    }

    /**
     * A row given up: when its lease ends ({@link System#nanoTime()}), and its lease's end as written (microseconds),
     * which tells it from a row that took its id after a crash, and from itself once a relay claimed it again.
     */
    private record GivenUp(long leaseEnds, long leasedUntil) {
    }

    // The rows given up whose lease has not ended yet, by id, with their lease's end as written (the others are due
    // anyway, and forgotten here).
    private Map<Long, Long> givenUpStillLeased() {
        if (givenUp.isEmpty()) {
            return Map.of();
        }
        forgetGivenUpPastTheirLease();
        Map<Long, Long> leases = new HashMap<>();
        givenUp.forEach((id, row) -> leases.put(id, row.leasedUntil()));
        return leases;
    }

    private void forgetGivenUpPastTheirLease() {
        long now = System.nanoTime();
        givenUp.values().removeIf(row -> row.leaseEnds() - now <= 0);
    }

    // Claimed now. A given-up row not claimed may be held back behind a row another sender still sends, or gone (its
    // commit was lost): asked again at the next run, until its lease ends.
    private void forgetGivenUp(List<OutboxRow> claimed) {
        claimed.forEach(row -> givenUp.remove(row.id()));
    }

    /** Lets go, at startup, of rows that earlier starts of this instance leased and did not send (they died). */
    int releaseEarlierStarts(String instancePrefix) {
        return table.releaseEarlierStarts(instancePrefix, owner);
    }

    /** @return the oldest waiting messages, at most {@code limit}: id, message id, channel, age, failures */
    public List<Map<String, Object>> oldest(int limit) {
        return table.oldest(limit);
    }

    /**
     * Sends now the messages waiting for a retry after a refusal, and any whose lease ran out (the Dev UI's "send
     * now"); messages still leased to a sender are left to it.
     *
     * @return how many rows the relay claimed
     */
    public int sendNow() {
        table.retryNow();
        return relayDue();
    }

    /** @return what the outbox has done since the start */
    public OutboxCounts counts() {
        return counts;
    }

    /** @return the rows waiting and the age of the oldest, read from the table now */
    public OutboxBacklog backlog() {
        OutboxBacklog read = table.backlog();
        lastBacklog = read;
        return read;
    }

    /** @return the backlog as the relay job last read it (each run), or none yet */
    public OutboxBacklog lastBacklog() {
        return lastBacklog;
    }

    /** @param listener told the nanoseconds from each message's sending to its broker confirm */
    public void onConfirmed(LongConsumer listener) {
        this.confirmed = listener;
    }
}
