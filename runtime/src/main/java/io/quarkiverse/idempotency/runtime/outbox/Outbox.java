package io.quarkiverse.idempotency.runtime.outbox;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongConsumer;

import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.reactive.messaging.Message;

import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.EnlistRefusal;
import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkiverse.idempotency.runtime.StoreMisconfiguredException;
import io.quarkiverse.idempotency.runtime.WorkerId;
import io.smallrye.reactive.messaging.GenericPayload;

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

    private final OutboxTable table;
    private final TransactionSynchronizationRegistry transactions;
    private final String owner;
    private final OutboxSettings settings;
    private final Executor worker;
    private final Iterable<OutgoingIds> connectors;
    private final Map<String, ChannelOutbox<?>> channels = new ConcurrentHashMap<>();
    private final OutboxCounters counters = new OutboxCounters();
    private final OutboxSender sender;
    /**
     * Rows this instance wrote and then gave up sending at once (the durability of their commit could not be learnt,
     * the database being down, or they waited past half their lease), by id: the relay takes them at its next run
     * instead of after their lease.
     */
    private final Map<Long, GivenUp> givenUp = new ConcurrentHashMap<>();
    private volatile OutboxBacklog lastBacklog = OutboxBacklog.NONE;

    Outbox(OutboxTable table, TransactionSynchronizationRegistry transactions, WorkerId worker,
            OutboxSettings settings, Executor executor, Iterable<OutgoingIds> connectors) {
        this.connectors = connectors;
        this.table = table;
        this.transactions = transactions;
        this.owner = worker.value();
        this.settings = settings;
        this.worker = executor;
        this.sender = new OutboxSender(table, settings, executor, channels, counters);
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

    /**
     * Writes a message in the caller's transaction; sent once the transaction has committed. In an
     * {@code @Idempotent @WithTransaction} handler, it is written once the handler returned, in its transaction
     * ({@link SessionOutbox}).
     */
    String write(ChannelOutbox<?> channel, Object payload, String givenId, String key) {
        return write(channel, payload, givenId, key, null);
    }

    // into: the writes of the reactive transaction to keep the message in, or null for the caller's transaction (or the
    // reactive one running on its context)
    private String write(ChannelOutbox<?> channel, Object payload, String givenId, String key, PendingWrites into) {
        int status = transactions.getTransactionStatus();
        PendingWrites reactive = into != null ? into : status == Status.STATUS_ACTIVE ? null : PendingWrites.current();
        if (status != Status.STATUS_ACTIVE && reactive == null) {
            throw new IllegalStateException("The outbox of channel '" + channel.channel() + "' writes in the caller's"
                    + " transaction, and there is " + (status == Status.STATUS_NO_TRANSACTION ? "none"
                            : "none active (status " + status + ")")
                    + ": the message is not sent. Send it from a @Transactional method (on the datasource of the"
                    + " idempotency keys), from an @Idempotent @WithTransaction method while it runs, or through a"
                    + " plain Emitter if it needs no outbox");
        }
        String messageId = givenId != null ? givenId : UUID.randomUUID().toString();
        byte[] stored = OutboxPayloads.encode(payload);
        if (reactive != null) {
            reactive.add(new PendingWrites.Pending(messageId, channel.channel(), key, OutboxPayloads.kind(payload),
                    stored, payload));
            return messageId;
        }
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
        pending().written(written, messageId, channel.channel(), key, payload);
        return messageId;
    }

    /**
     * Writes a {@code @ThroughOutbox} processor's output as a message of its {@code @Outgoing} channel, as
     * {@link #write} does a send: in the caller's transaction, or kept for the reactive transaction of the handler
     * that is running. A {@code null} output writes nothing (the processor skipped the message).
     *
     * @param messageId the output's id ({@link #outputId})
     * @throws IllegalStateException when the output is a {@code Message} (its metadata would not be kept), or there is
     *         no transaction to write it in
     */
    public void writeOutput(String channel, Object output, String messageId) {
        writeOutput(channel, output, messageId, null);
    }

    /** {@link #writeOutput(String, Object, String)} into the writes of a reactive transaction, when not {@code null}. */
    void writeOutput(String channel, Object output, String messageId, PendingWrites into) {
        if (output == null) {
            return;
        }
        if (output instanceof Message<?> || output instanceof GenericPayload<?>) {
            throw new IllegalStateException("A @ThroughOutbox processor returns the payload of its output, not a "
                    + output.getClass().getSimpleName() + ": the outbox keeps the payload and the message id only,"
                    + " and the channel's configuration says the rest (channel '" + channel + "')");
        }
        ChannelOutbox<?> outbox = channels.get(channel);
        if (outbox == null) {
            throw new IllegalStateException("The outbox of channel '" + channel + "' is not wired yet: the application"
                    + " is starting or stopping; the message is retried");
        }
        write(outbox, output, messageId, null, into);
    }

    /**
     * The id of a {@code @ThroughOutbox} processor's output: a name-based UUID of the incoming message's key (in a form
     * that does not change with the key's storage: its digest when a digest secret is configured) and the outgoing
     * channel, so that every output the key's deliveries could write carries the same id, and a downstream
     * {@code @Idempotent} consumer with the default key drops any second one.
     */
    public static String outputId(ScopedKey key, String channel) {
        // each part prefixed by its length: no two (scope, key, channel) give one name
        String name = "quarkus-idempotency output " + key.scope().length() + ":" + key.scope() + key.key().length() + ":"
                + key.key() + channel.length() + ":" + channel;
        return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)).toString();
    }

    /** @return the messages of a reactive transaction, as {@link SessionOutbox} writes them and sends them after it */
    AfterCommit reactiveTransaction() {
        return new AfterCommit();
    }

    String owner() {
        return owner;
    }

    OutboxSettings settings() {
        return settings;
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

    /**
     * The messages one transaction wrote, sent when it commits, forgotten when it rolls back: a JTA transaction's, told
     * its end as a {@link Synchronization}, or a reactive one's, told by {@link #committed()}.
     */
    final class AfterCommit implements Synchronization {
        final List<OutboxRow> rows = new ArrayList<>(2);
        /** Whether the transaction's commit returns before it is durable: then sent once the WAL is flushed. */
        boolean asynchronousCommit;
        /** When its first row was written: the rows' leases run from then. */
        long firstWritten;

        /** A row this transaction wrote. */
        void written(OutboxTable.Written written, String messageId, String channel, String key, Object payload) {
            if (rows.isEmpty()) {
                firstWritten = System.nanoTime();
            }
            rows.add(new OutboxRow(written.id(), messageId, channel, key, payload, 0, written.leasedUntil()));
            asynchronousCommit |= written.asynchronousCommit();
        }

        /**
         * Sends the rows of a reactive transaction that committed. A failure to hand them over (the application
         * stopping) leaves them to the relay: it never fails the delivery whose transaction committed.
         */
        void committed() {
            try {
                afterCompletion(Status.STATUS_COMMITTED);
            } catch (RuntimeException e) {
                LOG.outboxNotHandedOver(e.toString());
            }
        }

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
                counters.afterCommitsHandled.increment();
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
                    counters.afterCommitsHandled.increment();
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
            sender.sendInOrder(rows, firstWritten);
        }
    }

    /**
     * Sends the rows whose lease has run out (left by a crash, refused by the broker, or written by an instance that is
     * gone), batch after batch, each awaited within its lease.
     *
     * @return how many rows it claimed
     */
    public int relayDue() {
        counters.relayRunsStarted.increment();
        try {
            return relayEachBatch();
        } finally {
            counters.relayRunsEnded.increment();
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
            sender.renewInFlight();
            long leaseSet = System.nanoTime();
            List<OutboxRow> rows = table.claimDue(owner, settings.lease(), settings.batchSize(), channels.keySet(),
                    ours);
            forgetGivenUp(rows);
            ours = Map.of();
            claimed += rows.size();
            List<CompletableFuture<Boolean>> sending = sender.sendInOrder(rows, leaseSet);
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
            sender.deleteConfirmed();
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

    /** @return what the outbox has done since the start, as of now */
    public OutboxCounts counts() {
        return counters.now();
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
        sender.onConfirmed(listener);
    }
}
