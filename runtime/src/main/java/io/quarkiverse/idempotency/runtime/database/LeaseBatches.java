package io.quarkiverse.idempotency.runtime.database;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.IdempotencyStore.HeldClaim;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.ScopedKey;

/**
 * Batches of lease-mode calls as the batch statements of {@link RecordStatements} take them (array parameters) and as
 * their callers get their answers: shared by the JDBC store and the reactive client's, which differ only in how they
 * send a statement.
 */
final class LeaseBatches {

    private LeaseBatches() {
    }

    /** A lease-mode claim waiting for its batch. */
    record ClaimRequest(ScopedKey key, String id, String token, Duration lease, Duration retention, MessageFacts facts) {

        ClaimRequest(ScopedKey key, String token, Duration lease, Duration retention, MessageFacts facts) {
            this(key, StorageKeys.of(key), token, lease, retention, facts);
        }
    }

    /** A lease-mode confirm waiting for its batch. */
    record ConfirmRequest(ScopedKey key, String id, String token, Duration retention) {

        ConfirmRequest(ScopedKey key, String token, Duration retention) {
            this(key, StorageKeys.of(key), token, retention);
        }
    }

    /**
     * A batch of claims: its distinct keys, sorted (so that two batches take row locks in one order), as the seven
     * arrays of {@link RecordStatements#claimBatch}.
     */
    static final class Claims {

        final List<ClaimRequest> batch;
        private final ScopedKey[] keys;
        final String[] ids;
        final String[] scopes;
        final String[] tokens;
        final Long[] leases;
        final Long[] retentions;
        final String[] messageIds;
        final String[] fingerprints;

        Claims(List<ClaimRequest> batch) {
            this.batch = batch;
            Map<String, ClaimRequest> byKey = new TreeMap<>();
            for (ClaimRequest request : batch) {
                byKey.putIfAbsent(request.id(), request);
            }
            int n = byKey.size();
            keys = new ScopedKey[n];
            ids = new String[n];
            scopes = new String[n];
            tokens = new String[n];
            leases = new Long[n];
            retentions = new Long[n];
            messageIds = new String[n];
            fingerprints = new String[n];
            int i = 0;
            for (ClaimRequest request : byKey.values()) {
                keys[i] = request.key();
                ids[i] = request.id();
                scopes[i] = StorageKeys.scopeColumn(request.key().scope());
                tokens[i] = request.token();
                leases[i] = request.lease().toMillis();
                retentions[i] = request.retention().toMillis();
                messageIds[i] = request.facts().messageId();
                fingerprints[i] = request.facts().fingerprint();
                i++;
            }
        }

        /** @return how many distinct keys the batch claims */
        int size() {
            return ids.length;
        }

        /** @return what names the batch in a failure: its size and its first key */
        String describe() {
            return ids.length + " keys (" + batch.get(0).key() + ", ...)";
        }

        /** @return the key of distinct key {@code i}, as the store holds it */
        ScopedKey keyOf(int i) {
            return keys[i];
        }

        /**
         * @param distinct the answer for each distinct key, in the arrays' order
         * @return the answer for each request of the batch, in its order: a key asked twice (two deliveries of it at
         *         once) is claimed once, and the other asker learns what a delivery arriving just after would (busy
         *         while the first holds it; done or dead-lettered alike)
         */
        List<Claim> answers(List<Claim> distinct) {
            Map<String, Claim> byId = new HashMap<>();
            for (int i = 0; i < ids.length; i++) {
                byId.put(ids[i], distinct.get(i));
            }
            List<Claim> answers = new ArrayList<>(batch.size());
            Set<String> answered = new HashSet<>();
            for (ClaimRequest request : batch) {
                Claim claim = byId.get(request.id());
                boolean first = answered.add(request.id());
                boolean held = claim.result() == ClaimResult.NEW || claim.result() == ClaimResult.TAKEN_OVER;
                answers.add(first || !held ? claim : Claim.busyFor(request.lease()));
            }
            return answers;
        }

        /**
         * The batch's statement committed, but some distinct keys could not be looked at again after it: each request
         * gets its own answer ({@link #answers}) or its key's failure, never the failure of the whole batch, so that a
         * key it claimed for a delivery reaches that delivery.
         *
         * @param distinct the answer for each distinct key, {@code null} where its look-up failed
         * @param failures the failure of each distinct key's look-up, {@code null} where it answered
         * @return the answers when every key answered
         * @throws PartlyAnswered when a look-up failed
         */
        List<Claim> answers(Claim[] distinct, RuntimeException[] failures) {
            RuntimeException first = null;
            Map<String, RuntimeException> failed = new HashMap<>();
            for (int i = 0; i < ids.length; i++) {
                if (failures[i] != null) {
                    failed.put(ids[i], failures[i]);
                    first = first == null ? failures[i] : first;
                    distinct[i] = Claim.BUSY; // a placeholder, replaced by the failure below
                }
            }
            List<Claim> answers = answers(List.of(distinct));
            if (first == null) {
                return answers;
            }
            List<Object> partly = new ArrayList<>(batch.size());
            for (int i = 0; i < batch.size(); i++) {
                RuntimeException failure = failed.get(batch.get(i).id());
                partly.add(failure != null ? failure : answers.get(i));
            }
            throw new PartlyAnswered(partly, first);
        }
    }

    /** A batch of confirms, sorted by key, as the three arrays of {@link RecordStatements#confirmBatch}. */
    static final class Confirms {

        final List<ConfirmRequest> batch;
        final String[] ids;
        final String[] tokens;
        final Long[] retentions;

        Confirms(List<ConfirmRequest> batch) {
            this.batch = batch;
            List<ConfirmRequest> sorted = new ArrayList<>(batch);
            sorted.sort(Comparator.comparing(ConfirmRequest::id));
            int n = sorted.size();
            ids = new String[n];
            tokens = new String[n];
            retentions = new Long[n];
            for (int i = 0; i < n; i++) {
                ids[i] = sorted.get(i).id();
                tokens[i] = sorted.get(i).token();
                retentions[i] = sorted.get(i).retention().toMillis();
            }
        }

        /** @return what names the batch in a failure: its size and its first key */
        String describe() {
            return ids.length + " keys (" + batch.get(0).key() + ", ...)";
        }

        /**
         * @param confirmed the claims the statement confirmed, each as {@link #confirmed(String, String)} names it
         * @return whether each request of the batch, in its order, was confirmed: by key and token, never by key alone
         *         (a stale claim confirmed beside the one that took it over is not)
         */
        List<Boolean> answers(Set<String> confirmed) {
            List<Boolean> answers = new ArrayList<>(batch.size());
            for (ConfirmRequest request : batch) {
                answers.add(confirmed.contains(confirmed(request.id(), request.token())));
            }
            return answers;
        }

        /** @return a confirmed claim, from a row of the batch statement: its key and its token */
        static String confirmed(String scopedKey, String token) {
            return scopedKey + '\u0000' + token;
        }
    }

    /** Held claims to renew, as the three arrays of {@link RecordStatements#renew}. */
    static final class Renewals {

        final String[] ids;
        final String[] tokens;
        final Long[] leases;

        Renewals(Collection<HeldClaim> claims) {
            ids = new String[claims.size()];
            tokens = new String[ids.length];
            leases = new Long[ids.length];
            int i = 0;
            for (HeldClaim held : claims) {
                ids[i] = StorageKeys.of(held.key());
                tokens[i] = held.token();
                leases[i++] = held.lease().toMillis();
            }
        }
    }
}
