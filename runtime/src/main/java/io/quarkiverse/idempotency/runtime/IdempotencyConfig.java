package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;

import io.quarkus.runtime.annotations.ConfigDocMapKey;
import io.quarkus.runtime.annotations.ConfigDocSection;
import io.quarkus.runtime.annotations.ConfigPhase;
import io.quarkus.runtime.annotations.ConfigRoot;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/**
 * Runtime configuration of the idempotency extension.
 */
@ConfigMapping(prefix = "quarkus.idempotency")
@ConfigRoot(phase = ConfigPhase.RUN_TIME)
public interface IdempotencyConfig {

    /**
     * How long a handled key is remembered. It must outlast the slowest duplicate: the longest retry delay, a
     * dead-letter queue drained by hand next week, a replay. {@code @Idempotent(retention)} overrides it per method,
     * and {@code channels."<channel>".retention} per channel.
     */
    @WithDefault("24h")
    Duration retention();

    /**
     * How long a lease-mode claim is honoured unless renewed. A running handler's claim is renewed every third of
     * it, so a slow but live handler is never taken over; a crashed consumer's messages are handled again at most
     * this long after the crash. Only lease-mode methods use it (methods without a transaction): in-transaction
     * methods hold nothing that could outlive a crash. {@code @Idempotent(lease)} overrides it per method, and
     * {@code channels."<channel>".lease} per channel.
     */
    @WithDefault("30s")
    Duration lease();

    /**
     * How long a message waits before it is redelivered when another delivery of its key is being handled, or when
     * the store failed. The message stays unacknowledged meanwhile (it holds one slot of the channel's prefetch).
     * When the other delivery's lease runs longer, a busy message waits for it, up to a third of the lease.
     */
    @WithDefault("1s")
    Duration requeueDelay();

    /**
     * How long a processor ({@code @Incoming} and {@code @Outgoing}) waits for its output to be acknowledged downstream
     * before its attempt counts as failed: its key is confirmed only once its output is acknowledged, and its claim is
     * renewed meanwhile, so without this bound an output lost on the way would hold the key (every duplicate told
     * "busy") for the whole retention. After it, the input comes back and emits again; a late acknowledgement changes
     * nothing.
     */
    @WithDefault("5m")
    Duration outputAckTimeout();

    /**
     * What becomes of a duplicate whose payload differs from the payload its key was written with (their fingerprints,
     * a digest of each payload, differ): two different messages share the key, so the key function is probably wrong or
     * the producer reused an id, and the second message would be dropped silently. {@code warn} acks it as a duplicate,
     * counts it ({@code idempotency.duplicates}, tag {@code payload=mismatch}) and logs it once per key with both message
     * ids; {@code dead-letter} dead-letters it (outcome {@code payload-mismatch}); {@code off} computes no fingerprint.
     * Keys written without a fingerprint (by an earlier version, or a payload type without a canonical byte form on a
     * connector that does not keep the body) are never mismatches.
     */
    @WithDefault("warn")
    PayloadMismatch payloadMismatch();

    /**
     * How keys are stored: {@code readable} (as the key function made them) or {@code digest} (a keyed digest,
     * HMAC-SHA-256 with {@code key-digest-secret}, base64url, of each key: the table, the Dev UI, the logs and the
     * dead-letter headers then hold digests, never the keys). Applies to keys written from now on; see
     * {@code key-storage-changed-at} for changing it on a running system.
     */
    @WithDefault("readable")
    KeyStorage keyStorage();

    /**
     * The name of this instance of the application: the same across its restarts, and used by no other instance running
     * at the same time (on Kubernetes, the pod's name, its {@code HOSTNAME} variable: a container restarted in its pod
     * keeps it, and so does a StatefulSet's pod). When set, an instance that starts ends at once the leases of the claims its
     * earlier starts left, instead of waiting for them to run out: after a crash loop, the messages that were running
     * are taken over within seconds of the last restart, each takeover still counted as its dead holder's attempt. Two
     * instances running at once under one name would take each other's live claims over, so leave it unset (the
     * default: a dead instance's claims wait for their leases) where names are not unique. At most 64 characters,
     * without {@code @} or {@code #}.
     */
    Optional<String> instanceId();

    /**
     * The secret of the keys' digests ({@code key-storage=digest}), at least 32 characters: without it, a key's digest
     * could be recomputed from a guessed key. Keep it as long as keys written with it live (a retention); changing it
     * turns every live key into a new one. Set it from a secret store, not in a file under version control.
     */
    Optional<String> keyDigestSecret();

    /**
     * The instant {@code key-storage} changes, or changed (ISO-8601, {@code 2026-12-01T10:00:00Z}). Set it with the new
     * {@code key-storage}, for an instant after the rolling deployment that brings it will have completed: until then
     * the keys keep the form they had before (the form the instances being replaced write), and every instance
     * switches at that instant. From the deployment until one retention after the instant, a key not found in the form
     * it is stored in is looked up in the other form too, and a confirmed, dead-lettered or held record there answers
     * for it (a confirmed one is then copied to the current form): the keys written before the change keep their
     * answers, in both directions. Meanwhile every delivery claims its key on a lease first (one commit more). No
     * instance of the old configuration may run past the instant. The digest form needs {@code key-digest-secret} both
     * ways. Remove the setting once a retention has passed (it then does nothing).
     */
    Optional<java.time.Instant> keyStorageChangedAt();

    /**
     * How many keys this process confirmed are remembered in memory, so that a duplicate of one is acked without a
     * round trip to the store. Safe (a confirmed key is final); {@code 0} turns it off.
     */
    @WithDefault("100000")
    int confirmedKeysCacheSize();

    /**
     * Handler failures: how many attempts a message gets and how long it waits between them.
     */
    @ConfigDocSection
    Retry retry();

    /**
     * Settings of one channel, overriding the global ones and the annotation's for the {@code @Idempotent} methods
     * that consume it.
     */
    @ConfigDocMapKey("channel")
    Map<String, Channel> channels();

    /**
     * Kafka channels.
     */
    @ConfigDocSection
    Kafka kafka();

    /**
     * The database store.
     */
    @ConfigDocSection
    Database database();

    /**
     * The purge job.
     */
    @ConfigDocSection
    Purge purge();

    /**
     * The transactional outbox: messages sent through an {@code OutboxEmitter}.
     */
    @ConfigDocSection
    OutboxConfig outbox();

    /**
     * Handler failures. A failed attempt (the handler threw, or its transaction rolled back) is counted in the store
     * against the message's key, so the count survives restarts and is shared by every instance; the message is
     * redelivered after a delay that doubles from attempt to attempt; once the budget is spent it is dead-lettered,
     * with the reason. The defaults give five attempts over about fifteen seconds.
     */
    interface Retry {

        /**
         * How many attempts a message gets, the first delivery included, before it is dead-lettered. {@code 1}
         * dead-letters on the first failure. {@code @Idempotent(maxAttempts)} overrides it per method, and
         * {@code channels."<channel>".retry.max-attempts} per channel.
         */
        @WithDefault("5")
        int maxAttempts();

        /**
         * How long a message waits after its first failed attempt; the wait doubles after each further one.
         */
        @WithDefault("1s")
        Duration initialDelay();

        /**
         * The longest wait between two attempts.
         */
        @WithDefault("1m")
        Duration maxDelay();

        /**
         * The share of each wait drawn at random (from 0 to 1), so that messages that failed together do not come
         * back together: at 0.2 a wait of 4 s is anything from 3.2 s to 4.8 s.
         */
        @WithDefault("0.2")
        double jitter();
    }

    /**
     * The settings of one channel.
     */
    interface Channel {

        /**
         * How long a handled key of this channel is remembered.
         */
        Optional<Duration> retention();

        /**
         * How long a lease-mode claim on this channel is honoured unless renewed.
         */
        Optional<Duration> lease();

        /**
         * Handler failures on this channel.
         */
        ChannelRetry retry();

        /**
         * What becomes of a duplicate on this channel whose payload differs from the one its key was written with
         * ({@code quarkus.idempotency.payload-mismatch} for this channel).
         */
        Optional<PayloadMismatch> payloadMismatch();

        /**
         * How keys of this channel are stored ({@code quarkus.idempotency.key-storage} for this channel).
         */
        Optional<KeyStorage> keyStorage();

        /**
         * Whether startup fails when this RabbitMQ channel's queue has no dead-letter exchange set up by the connector
         * ({@code auto-bind-dlq}): a message dead-lettered there would be dropped. Set it to {@code false} when the
         * queue's dead-lettering is configured on the broker (a policy, or queue arguments); the extension then
         * rejects such messages without requeue and lets the broker route them.
         */
        @WithDefault("true")
        boolean requireDeadLetterExchange();

        /**
         * Whether the transaction of this channel's in-transaction {@code @Idempotent} method (its work and its key)
         * commits without waiting for its WAL record to reach disk (PostgreSQL's {@code synchronous_commit = off}, for
         * that transaction only), its message acked only once the WAL is flushed past that commit: one flush, a
         * transaction with a synchronous commit, shared by the deliveries finishing at once.
         * <p>
         * What the broker sees does not change: a message is acked only once its work and its key are durable. If the
         * database server crashes, a commit not yet flushed is lost with its key and its work; its message was not
         * acked, so it comes back and runs again, once. What changes is for code that acts on the commit having
         * returned: when the transaction ends, the work may not be durable yet, for a few milliseconds. A transaction
         * observer, or a caller that e-mails a customer once the transactional method returned, must not take the
         * commit as durable: a crash of the database server in that moment loses the work and runs the message again.
         * The handler's own calls to other systems, made before the commit, may repeat after a crash as before; the
         * moment in which a crash makes them repeat now lasts until the flush rather than until the commit.
         * <p>
         * Only for {@code @Transactional} methods in in-transaction mode on the database store that take the payload
         * and return {@code void} or a value, on channels that requeue (RabbitMQ; not Kafka, which retries in place):
         * set on any other channel, the startup fails. It pays when several deliveries run at once
         * ({@code @Blocking(ordered = false)}, {@code concurrency}): their flushes are shared. One delivery at a time
         * still waits for a flush per message, one round trip more than a synchronous commit.
         */
        @WithDefault("false")
        boolean asynchronousCommit();
    }

    /**
     * Handler failures on one channel.
     */
    interface ChannelRetry {

        /**
         * How many attempts a message of this channel gets before it is dead-lettered.
         */
        OptionalInt maxAttempts();

        /**
         * How long a message of this channel waits after its first failed attempt.
         */
        Optional<Duration> initialDelay();

        /**
         * The longest wait between two attempts on this channel.
         */
        Optional<Duration> maxDelay();

        /**
         * The share of each wait on this channel drawn at random.
         */
        OptionalDouble jitter();
    }

    /**
     * Kafka channels.
     */
    interface Kafka {

        /**
         * The record header whose value is the default key (the message id) of a Kafka record that carries no
         * CloudEvents id ({@code ce_id}). A record with neither is keyed by its topic, partition and offset, which
         * identifies a redelivery of the same record but not the same order republished as a new record: use a key
         * function for that.
         */
        Optional<String> idHeader();
    }

    /**
     * The database store.
     */
    interface Database {

        /**
         * Whether a lease-mode claim's own transaction commits without waiting for its WAL record to reach disk
         * (PostgreSQL's {@code synchronous_commit = off}, for that transaction only). The claim is visible to every
         * other delivery at once, as always, and becomes durable at the latest when the handler's transaction commits
         * (the WAL is flushed in order) or within three times {@code wal_writer_delay} (600ms by default).
         * In-transaction methods have no claim of their own: this changes nothing for them.
         * <p>
         * The trade-off: if the database server (not the application) crashes, or fails over to a synchronous standby,
         * the claims made in that last moment may be lost. For each such handler still running, a redelivery can then
         * run the handler again at once, while the first run is still going, instead of waiting for it. A
         * {@code @Transactional} handler's first run then finds no claim to confirm, so its transaction rolls back and
         * its message is retried: its database work stays exactly-once, but work outside the database (an HTTP call)
         * may happen twice. A handler without a transaction has already done its work: its message is acked, but its
         * key is never confirmed, so a later duplicate runs again (a warning at startup names such methods).
         * <p>
         * It saves one WAL flush wait per message.
         */
        @WithDefault("false")
        boolean asynchronousClaimCommit();

        /**
         * The most lease-mode claims of deliveries running at once that share one statement and one commit (and
         * likewise their confirms). A claim that finds no batch under way runs at once, alone, as with {@code 1}; claims
         * arriving while one runs wait for it and then go together, so a claim waits at most one batch's time, never a
         * timer. Each delivery still learns its own answer (new, duplicate, busy, dead-lettered), its handler runs only
         * once its claim has committed, and its message is acked only once the commit holding its confirm has returned:
         * the outcomes are those of claims made one by one; only the number of commits differs. A failure of the
         * statement fails exactly the deliveries of that batch (a store failure: claims are retried later, confirms
         * logged). {@code 1}: every claim and confirm commits on its own. In-transaction methods have no claim of their
         * own and confirm in their handler's transaction: this changes nothing for them.
         */
        @WithDefault("64")
        int leaseBatchSize();

        /**
         * What the extension does with its table at startup. {@code update} creates it, or brings a table of an earlier
         * version up to date (statements that do nothing when their part is there, taken by one starting instance at a
         * time); {@code validate} only checks it. Either way, the application stops at startup, with the statements to
         * run, when the table is missing or outdated. Unset: {@code update} in dev and test mode, {@code validate} in
         * production, where the shipped Flyway migrations or Liquibase changelog, or {@code update}, create it.
         */
        Optional<SchemaManagement.Mode> schemaManagement();

        /**
         * How the key table is laid out. {@code time}: partitioned by expiry, a partition per {@code partition-period};
         * the purge job creates partitions ahead and drops expired ones whole (no DELETE, no dead rows, no vacuum debt),
         * and a key is kept at least its retention and at most its retention plus one period. {@code none}: one table,
         * whose expired rows the purge job deletes in batches. Unset: {@code time} for a table the extension creates
         * ({@code schema-management=update}) wherever it can be (PostgreSQL 14 or later, READ COMMITTED transactions,
         * a name leaving room for its partitions'; over JDBC or with only the reactive client), one table elsewhere,
         * said at startup (INFO {@code IDEMP3008}). Measured here, a partitioned table saves 38% of the WAL per message and
         * every dead row,
         * and keeps the table at its bound whatever the rate; its consumer ran at 0.72-1.16 of one table's in the
         * layouts benchmark (medians 0.85-1.02 over three runs of 5 rounds: a claim's look-up probes every partition,
         * about 7 µs of the database's time each, seven partitions with the default period) and at 0.66-0.90 in
         * soaks of 12-30 minutes that compress a day into minutes (keys in every live partition; the operations
         * guide has the figures).
         * An existing unpartitioned table holding no key (one Hibernate ORM just made) is made again partitioned under
         * {@code update}; one holding keys keeps its layout, with a startup WARN ({@code IDEMP3002}) naming the move
         * ({@code time} and {@code update} on one instance, while consumers run). The shipped Flyway migration and
         * Liquibase changelog create one table unless their parameter says {@code time} (their database user may not
         * be the application's, which must own a partitioned table). {@code time} set explicitly refuses a server or
         * a table name that cannot have partitions, and moves an existing table under {@code update} (over JDBC only:
         * an application with only the reactive client refuses to start on an unpartitioned table then).
         */
        Optional<Partitioning> partitioning();

        /**
         * How much expiry time one partition of a time-partitioned table covers: the longest a key outlives its
         * retention, and the purge job's step. Unset: a quarter of {@code quarkus.idempotency.retention}, so a lookup
         * visits about five partitions. Applies to partitions created from now on. The purge job should run at least
         * once per period ({@code purge.every}); a write finding no partition ahead creates it at once.
         */
        Optional<Duration> partitionPeriod();

        /** The layout of a key table. */
        enum Partitioning {
            /** Partitioned by expiry time. */
            TIME,
            /** One table. */
            NONE
        }
    }

    /**
     * Schema management of the database store.
     */
    interface SchemaManagement {

        /** What the extension does with its table at startup. */
        enum Mode {
            /** Create the table, or bring it up to date. */
            UPDATE,
            /** Only check it. */
            VALIDATE
        }
    }

    /**
     * The purge job.
     */
    interface Purge {

        /**
         * How often the purge job runs, as a duration ({@code 1h}) or {@code off} to stop it at runtime.
         */
        @WithDefault("1h")
        String every();

        /**
         * How many expired keys one purge statement deletes (at least 1); the job repeats until fewer are left, so
         * that no single statement holds locks for long.
         */
        @WithDefault("10000")
        int batchSize();

        /**
         * How much of its running time the purge may spend deleting, in percent (1 to 100). After each batch it pauses
         * for as long as that batch took, times {@code (100 - busy-percent) / busy-percent}: at 10 (the default) it
         * rests nine times as long as it worked, so the consumers sharing the database keep nearly all of it, and the
         * pace follows the database's load by itself. {@code 100} purges flat out.
         */
        @WithDefault("10")
        int busyPercent();

        /**
         * The shortest pause between two batches, whatever {@code busy-percent} gives. {@code 0} (the default) leaves
         * the pace to {@code busy-percent}.
         */
        @WithDefault("0")
        Duration pauseBetweenBatches();
    }
}
