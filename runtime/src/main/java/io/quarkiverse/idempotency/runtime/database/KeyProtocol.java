package io.quarkiverse.idempotency.runtime.database;

import static io.quarkiverse.idempotency.runtime.database.SqlCalls.SqlArray.bigint;
import static io.quarkiverse.idempotency.runtime.database.SqlCalls.SqlArray.varchar;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.LeaseBatches.ClaimRequest;
import io.smallrye.mutiny.Uni;

/**
 * The key table's protocol, written once: each operation of the database store as its statements, the decoding of
 * their rows and the fallbacks between them ("no row: look again", "its holder rolled back: insert again"), against
 * any way of running SQL ({@link SqlCalls}): JDBC on the caller's thread, the reactive client's pool, a Hibernate
 * Reactive session. A partitioned table takes the statements of {@link PartitionStatements} where it needs them.
 */
public final class KeyProtocol {

    /** How many times an in-transaction claim looks again when the key's holder ended between two statements. */
    static final int IN_TRANSACTION_ROUNDS = 3;

    /** The answer to an insert that wrote the key: a new key, no attempt failed before. */
    private static final Claim NEW = Claim.claimed(ClaimResult.NEW, 0);

    private final RecordStatements sql;
    private final boolean asynchronousClaimCommit;
    private final String partitionedClaim;
    private final String partitionedClaimBatch;
    private final String partitionedClaimInTransaction;
    private final String partitionedRecordFailure;

    /**
     * @param table the key table's name
     * @param asynchronousClaimCommit whether a lease-mode claim's commit skips waiting for its WAL flush
     */
    public KeyProtocol(String table, boolean asynchronousClaimCommit) {
        this.sql = new RecordStatements(table, asynchronousClaimCommit);
        this.asynchronousClaimCommit = asynchronousClaimCommit;
        this.partitionedClaim = PartitionStatements.claim(table);
        this.partitionedClaimBatch = PartitionStatements.claimBatch(table);
        this.partitionedClaimInTransaction = PartitionStatements.claimInTransaction(table);
        this.partitionedRecordFailure = PartitionStatements.recordFailureAfterRollback(table);
    }

    /** @return the statements of the unpartitioned table */
    public RecordStatements statements() {
        return sql;
    }

    /** A lease-mode claim, committed on its own (see {@link RecordStatements#claim}). */
    Uni<Claim> claim(SqlCalls db, ClaimRequest request, boolean partitioned) {
        String id = request.id();
        String scope = StorageKeys.scopeColumn(request.key().scope());
        long lease = request.lease().toMillis();
        long retention = request.retention().toMillis();
        MessageFacts facts = request.facts();
        if (partitioned) {
            return db.query(partitionedClaim, id, scope, request.token(), lease, retention, facts.messageId(),
                    facts.fingerprint(), asynchronousClaimCommit).map(rows -> claimOf(rows.get(0), 0));
        }
        return db.query(sql.claim, id, id, scope, request.token(), lease, retention, facts.messageId(),
                facts.fingerprint(), id).chain(
                        rows -> rows.isEmpty() ? lookAgain(db, id)
                                : Uni.createFrom().item(claimOf(rows.get(0), 0)));
    }

    // A concurrent transaction wrote the key after the claim's snapshot, or holds it: its record, looked at again (no
    // row: an in-transaction delivery holds it).
    private Uni<Claim> lookAgain(SqlCalls db, String id) {
        return db.query(sql.state, id).map(rows -> rows.isEmpty() ? Claim.BUSY : claimOf(rows.get(0), 0));
    }

    /**
     * Claims a batch of keys in one statement and one commit (see {@link LeaseBatches.Claims#answers}): a key it could
     * not claim is looked at again, and a look-up that fails fails that key's request only ({@code failures}), not the
     * keys the statement claimed.
     *
     * @return the answers by position of the batch's distinct keys; {@code null} where {@code failures} has the failure
     */
    Uni<Claim[]> claimBatch(SqlCalls db, LeaseBatches.Claims claims, RuntimeException[] failures, boolean partitioned) {
        Object[] arrays = { varchar(claims.ids), varchar(claims.scopes), varchar(claims.tokens), bigint(claims.leases),
                bigint(claims.retentions), varchar(claims.messageIds), varchar(claims.fingerprints),
                asynchronousClaimCommit };
        Uni<List<SqlRow>> batch = partitioned ? db.query(partitionedClaimBatch, arrays)
                : db.query(sql.claimBatch, java.util.Arrays.copyOf(arrays, 7));
        return batch.chain(rows -> {
            Claim[] answers = new Claim[claims.size()];
            for (SqlRow row : rows) {
                answers[row.count(0) - 1] = row.string(1) == null ? null : claimOf(row, 1);
            }
            List<Uni<Claim>> looks = new ArrayList<>();
            for (int i = 0; i < answers.length; i++) {
                if (answers[i] == null) {
                    int key = i;
                    looks.add(lookAgain(db, claims.ids[i]).invoke(claim -> answers[key] = claim).onFailure()
                            .recoverWithItem(e -> {
                                failures[key] = new IllegalStateException("Could not claim key '" + claims.keyOf(key)
                                        + "': " + e.getMessage(), e);
                                return null;
                            }));
                }
            }
            return looks.isEmpty() ? Uni.createFrom().item(answers)
                    : Uni.join().all(looks).andCollectFailures().replaceWith(answers);
        });
    }

    /** Confirms a claim, fenced by its token: false when it is no longer this token's. */
    Uni<Boolean> confirm(SqlCalls db, ScopedKey key, String token, Duration retention) {
        return db.update(sql.confirm, retention.toMillis(), StorageKeys.of(key), token).map(updated -> updated == 1);
    }

    /**
     * {@link #confirm} in a handler's transaction: a statement of the handler's that failed and was caught aborted that
     * transaction, which can then commit neither its work nor its key.
     */
    Uni<Boolean> confirmInTransaction(SqlCalls db, ScopedKey key, String token, Duration retention) {
        return confirm(db, key, token, retention).onFailure(AbortedTransactions::inFailedTransaction)
                .transform(e -> AbortedTransactions.of(key, e));
    }

    /** @return the answers of a batch of confirms in one statement and one commit, each fenced by its token */
    Uni<List<Boolean>> confirmBatch(SqlCalls db, LeaseBatches.Confirms confirms) {
        return db.query(sql.confirmBatch, varchar(confirms.ids), varchar(confirms.tokens), bigint(confirms.retentions))
                .map(rows -> {
                    Set<String> confirmed = new HashSet<>();
                    for (SqlRow row : rows) {
                        confirmed.add(LeaseBatches.Confirms.confirmed(row.string(0), row.string(1)));
                    }
                    return confirms.answers(confirmed);
                });
    }

    /**
     * Counts a failed attempt on the claim the token holds; when the claim's transaction rolled back with the
     * handler's (no claim), the record is written again, as failed.
     *
     * @return the failed attempts counted (0: none, the key is held by another delivery)
     */
    Uni<Integer> recordFailure(SqlCalls db, ScopedKey key, String token, String failure, int maxAttempts,
            Duration retention, boolean partitioned) {
        String id = StorageKeys.of(key);
        String reason = RecordStatements.reason(failure);
        long keep = retention.toMillis();
        return db.query(sql.recordFailureOfClaim, maxAttempts, reason, keep, id, token).chain(rows -> {
            if (!rows.isEmpty()) {
                return Uni.createFrom().item(rows.get(0).count(0));
            }
            String scope = StorageKeys.scopeColumn(key.scope());
            Uni<List<SqlRow>> again = partitioned
                    ? db.query(partitionedRecordFailure, id, scope, maxAttempts, token, keep, reason)
                    : db.query(sql.recordFailureAfterRollback, id, scope, maxAttempts, token, keep, reason, id,
                            maxAttempts);
            return again.map(counted -> counted.isEmpty() ? 0 : counted.get(0).count(0)); // a null count: none
        });
    }

    /**
     * One WAL flush whose statement also reads which of these stored keys are confirmed ({@link WalFlushes} says why
     * that is the answer that counts after a crash): the same statement over JDBC, shared by the callers waiting at
     * once, and over the reactive client, for one caller.
     *
     * @return the keys among {@code ids} that are confirmed, durable once it answers
     */
    Uni<Set<String>> confirmedOnceFlushed(SqlCalls db, Collection<String> ids) {
        return db.query(sql.flushConfirming, new SqlCalls.SqlArray("text", ids.toArray(String[]::new)))
                .map(rows -> new HashSet<>(rows.get(0).strings(2)));
    }

    /** Gives up a claim without counting an attempt: whether there was one to give up. */
    Uni<Boolean> release(SqlCalls db, ScopedKey key, String token) {
        String id = StorageKeys.of(key);
        return db.query(sql.release, id, token, id, token).map(rows -> !rows.isEmpty() && rows.get(0).count(0) > 0);
    }

    /**
     * A key's record as a claim would see it, without claiming it. Its key is never named in a failure: in its other
     * form, the key may be the readable one that digest keys keep out of the logs.
     */
    Uni<Claim> peek(SqlCalls db, ScopedKey key) {
        return db.query(sql.peek, StorageKeys.of(key)).map(rows -> {
            SqlRow row = rows.isEmpty() ? null : rows.get(0);
            if (row == null || row.string(0) == null) {
                return NEW;
            }
            int attempts = row.count(1);
            return switch (row.string(0)) {
                case "LOCKED" -> Claim.BUSY; // written in a transaction not committed yet
                case "CONFIRMED" -> done(row, 4);
                case "DEAD_LETTERED" -> Claim.deadLettered(attempts, row.string(3));
                case "CLAIMED" -> row.isTrue(2) ? Claim.BUSY : Claim.claimed(ClaimResult.NEW, attempts);
                default -> Claim.claimed(ClaimResult.NEW, attempts);
            };
        });
    }

    /** What an in-transaction claim writes: the stored key, its scope column, the token, the retention, the facts. */
    record Write(ScopedKey key, String id, String scope, String token, Duration retention, MessageFacts facts) {
        Write(ScopedKey key, String token, Duration retention, MessageFacts facts) {
            this(key, StorageKeys.of(key), StorageKeys.scopeColumn(key.scope()), token, retention, facts);
        }
    }

    /**
     * Inside the handler's transaction the common case, a new key, is one guarded insert. Only when it inserts nothing
     * is the key looked at again: held by another delivery right now (busy), confirmed (a duplicate), dead-lettered, a
     * claim whose lease ran out (expired: taken over on a lease by the caller), or failed: retried here, under the
     * advisory lock this transaction then holds. With {@code asynchronousCommit}, the transaction is set to commit
     * without waiting for its WAL flush when it writes the key.
     */
    Uni<Claim> claimInTransaction(SqlCalls db, Write write, boolean asynchronousCommit, boolean partitioned) {
        return claimInTransaction(db, write, asynchronousCommit, partitioned, 0);
    }

    private Uni<Claim> claimInTransaction(SqlCalls db, Write write, boolean asynchronousCommit, boolean partitioned,
            int round) {
        if (round == IN_TRANSACTION_ROUNDS) {
            return Uni.createFrom().item(Claim.BUSY);
        }
        return inserted(db, write, asynchronousCommit, partitioned).chain(inserted -> inserted
                ? commitMode(db, partitioned && asynchronousCommit).replaceWith(NEW)
                : look(db, write, asynchronousCommit, partitioned, round));
    }

    private Uni<Boolean> inserted(SqlCalls db, Write write, boolean asynchronousCommit, boolean partitioned) {
        MessageFacts facts = write.facts();
        long retention = write.retention().toMillis();
        if (partitioned) {
            return db.query(partitionedClaimInTransaction, write.id(), write.scope(), write.token(), retention,
                    facts.messageId(), facts.fingerprint()).map(rows -> rows.get(0).isTrue(0));
        }
        return db.update(asynchronousCommit ? sql.claimInTransactionAsynchronously : sql.claimInTransaction, write.id(),
                write.scope(), write.token(), retention, facts.messageId(), facts.fingerprint(), write.id())
                .map(inserted -> inserted == 1);
    }

    // The key after an insert that inserted nothing.
    private Uni<Claim> look(SqlCalls db, Write write, boolean asynchronousCommit, boolean partitioned, int round) {
        return db.query(sql.lookInTransaction, write.id(), write.id()).chain(rows -> {
            SqlRow row = rows.get(0);
            String state = row.string(1);
            if (!row.isTrue(0)) {
                return Uni.createFrom().item(Claim.BUSY);
            }
            if (state == null) {
                return claimInTransaction(db, write, asynchronousCommit, partitioned, round + 1); // its holder rolled back
            }
            return switch (state) {
                case "CONFIRMED" -> Uni.createFrom().item(done(row, 5));
                case "DEAD_LETTERED" -> Uni.createFrom().item(Claim.deadLettered(row.count(2), row.string(4)));
                // a lease-mode claim: taken over on a lease by the caller once it ran out
                case "CLAIMED" -> Uni.createFrom().item(row.isTrue(3) ? Claim.EXPIRED : Claim.BUSY);
                default -> takeOver(db, write, asynchronousCommit, partitioned, round); // failed: retried here
            };
        });
    }

    private Uni<Claim> takeOver(SqlCalls db, Write write, boolean asynchronousCommit, boolean partitioned, int round) {
        MessageFacts facts = write.facts();
        return db.query(sql.takeOverInTransaction, write.token(), write.retention().toMillis(), facts.messageId(),
                facts.fingerprint(), write.id()).chain(
                        rows -> rows.isEmpty()
                                ? claimInTransaction(db, write, asynchronousCommit, partitioned, round + 1)
                                : commitMode(db, asynchronousCommit)
                                        .replaceWith(Claim.claimed(ClaimResult.NEW, rows.get(0).count(0))));
    }

    // Sets the transaction to commit without waiting for its WAL flush, when asked.
    private static Uni<Void> commitMode(SqlCalls db, boolean asynchronousCommit) {
        return asynchronousCommit ? db.query(RecordStatements.ASYNCHRONOUS_COMMIT).replaceWithVoid()
                : Uni.createFrom().voidItem();
    }

    // A row of a claim, or of its second look, from the column `skip` on: the answer, the failed attempts, a holder's
    // lease left, a reason, and the message facts and age of a key it did not take.
    private static Claim claimOf(SqlRow row, int skip) {
        ClaimResult result = ClaimResult.valueOf(row.string(skip));
        int attempts = row.count(skip + 1);
        Long leaseLeft = row.number(skip + 2);
        return switch (result) {
            case NEW, TAKEN_OVER -> Claim.claimed(result, attempts);
            case DONE -> done(row, skip + 4);
            case DEAD_LETTERED -> Claim.deadLettered(attempts, row.string(skip + 3));
            default -> leaseLeft == null || leaseLeft <= 0 ? Claim.BUSY : Claim.busyFor(Duration.ofMillis(leaseLeft));
        };
    }

    // A confirmed key, from its message id, fingerprint and age in milliseconds, at column `first` on.
    private static Claim done(SqlRow row, int first) {
        Long age = row.number(first + 2);
        return Claim.done(MessageFacts.of(row.string(first), row.string(first + 1)),
                age == null ? null : Duration.ofMillis(age));
    }
}
