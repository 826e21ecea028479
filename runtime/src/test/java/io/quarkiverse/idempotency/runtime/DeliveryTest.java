package io.quarkiverse.idempotency.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.AttemptsExhaustedException;
import io.quarkiverse.idempotency.Claim;
import io.quarkiverse.idempotency.ClaimLostException;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.DeliveryInProgressException;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.HandlerRolledBackException;
import io.quarkiverse.idempotency.HandlerTransactionAbortedException;
import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.LeaseExpiredException;
import io.quarkiverse.idempotency.MessageFacts;
import io.quarkiverse.idempotency.PayloadMismatchException;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.StoreUnavailableException;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;

/**
 * {@link Delivery}'s state machine, transition by transition, against a store whose every answer the test chooses and
 * which fails where the test says: what each transition answers, which state it leaves, what it asks of the store and
 * what it reports.
 */
class DeliveryTest {

    static final ScopedKey KEY = new ScopedKey("payments", "p-1");
    static final RetryPolicy RETRY = new RetryPolicy(3, Duration.ofSeconds(1), Duration.ofMinutes(1), 0);
    static final DeliveryPolicy POLICY = new DeliveryPolicy(Duration.ofHours(24), Duration.ofSeconds(30), RETRY, false);

    static Vertx vertx;

    ScriptedStore store;
    Events events;
    LeaseRenewer renewer;

    @BeforeAll
    static void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stopVertx() {
        vertx.close();
    }

    @BeforeEach
    void newContext() {
        store = new ScriptedStore();
        events = new Events();
        renewer = new LeaseRenewer(store, vertx, Duration.ofSeconds(30));
    }

    Delivery delivery(IdempotencyMode mode) {
        return delivery(mode, POLICY, Arrival.unknown(), null);
    }

    Delivery delivery(IdempotencyMode mode, DeliveryPolicy policy, Arrival arrival, ScopedKey previousKey) {
        MethodPlan plan = new MethodPlan("Payments#charge", "payments", null, (p, m) -> "p-1", mode,
                Map.of("payments", policy), IdempotentMethodInfo.Returns.SYNC, false, false, false, false);
        DeliveryContext context = new DeliveryContext(store, events, renewer, null, new ClaimTokens("worker"),
                Duration.ofMillis(500), new LocalHolders(), new NonBlockingStore(store, List.of()));
        return new Delivery(context, calls(store), plan, "payments", KEY, Metadata.empty(), arrival, previousKey);
    }

    /** The store calls of a delivery: answered on the calling thread here; later, on another thread, in a subclass. */
    KeyCalls calls(IdempotencyStore store) {
        return KeyCalls.onCallingThread(store);
    }

    /** The writes in a handler's transaction, answered as {@link #calls} are. */
    TransactionKeys transaction(IdempotencyStore store) {
        return TransactionKeys.jta(store);
    }

    static boolean claim(Delivery d) {
        return d.claim().await().indefinitely();
    }

    boolean claimInTransaction(Delivery d) {
        return d.claimInTransaction(transaction(store), Uni.createFrom()::item).await().indefinitely();
    }

    boolean confirmInTransaction(Delivery d) {
        return d.confirmInTransaction(transaction(store)).await().indefinitely();
    }

    static void succeeded(Delivery d) {
        d.succeeded().await().indefinitely();
    }

    static IdempotencyException failed(Delivery d, Throwable failure) {
        return d.failed(failure).await().indefinitely();
    }

    Delivery lease() {
        return delivery(IdempotencyMode.LEASE);
    }

    Delivery inTransaction() {
        return delivery(IdempotencyMode.IN_TRANSACTION);
    }

    // ---- claiming on a lease

    @Test
    void aNewKeyIsClaimedOnALeaseThenConfirmed() {
        Delivery d = lease();
        assertTrue(claim(d), "the handler runs");
        assertEquals(DeliveryState.CLAIMED, d.state());
        assertTrue(renewer.tracking(KEY), "its lease is renewed while the handler runs");
        succeeded(d);
        assertEquals(DeliveryState.HANDLED, d.state());
        assertFalse(renewer.tracking(KEY), "no longer renewed");
        assertEquals(List.of("claim", "confirm"), store.calls);
        assertEquals(List.of("claimAnswered", "ended:HANDLED"), events.seen);
    }

    @Test
    void aConfirmedKeyIsADuplicate() {
        store.claims.add(Claim.DONE);
        Delivery d = lease();
        assertFalse(claim(d), "the handler does not run");
        assertEquals(DeliveryState.DUPLICATE, d.state());
        assertTrue(d.isDuplicate());
        assertEquals(List.of("claimAnswered", "duplicate:UNKNOWN:UNKNOWN:null", "ended:DUPLICATE"), events.seen);
    }

    @Test
    void aKeyHeldElsewhereIsBusyAndWaitsForTheHoldersLeaseUpToAThirdOfItsOwn() {
        store.claims.add(Claim.busyFor(Duration.ofSeconds(25)));
        Delivery d = lease();
        DeliveryInProgressException busy = assertThrows(DeliveryInProgressException.class, () -> claim(d));
        assertEquals(DeliveryState.BUSY, d.state());
        assertEquals(Duration.ofSeconds(10), busy.retryDelay(), "a third of the 30 s lease");
        assertTrue(busy.requeue());
        assertSame(busy, failed(d, busy), "ending it again answers the same");
    }

    @Test
    void aBusyKeyWhoseHolderIsUnknownWaitsTheRequeueDelay() {
        store.claims.add(Claim.BUSY);
        DeliveryInProgressException busy = assertThrows(DeliveryInProgressException.class, () -> claim(lease()));
        assertEquals(Duration.ofMillis(500), busy.retryDelay());
    }

    @Test
    void anExpiredClaimIsTakenOverOnceTheDeadOwnersAttemptIsCounted() {
        store.claims.add(Claim.claimed(ClaimResult.TAKEN_OVER, 1));
        store.counts.add(2); // the dead owner's attempt
        store.claims.add(Claim.claimed(ClaimResult.NEW, 2));
        Delivery d = lease();
        assertTrue(claim(d), "the handler runs again, within the budget");
        assertEquals(DeliveryState.CLAIMED, d.state());
        assertEquals(2, d.failedBefore());
        assertEquals(List.of("claim", "recordFailure", "claim"), store.calls);
        assertEquals(List.of("claimAnswered", "tookOver", "claimAnswered"), events.seen);
    }

    @Test
    void aTakeoverThatSpendsTheBudgetIsDeadLetteredWithoutRunning() {
        store.claims.add(Claim.claimed(ClaimResult.TAKEN_OVER, 2));
        store.counts.add(3);
        Delivery d = lease();
        AttemptsExhaustedException spent = assertThrows(AttemptsExhaustedException.class, () -> claim(d));
        assertEquals(3, spent.attempts());
        assertInstanceOf(LeaseExpiredException.class, spent.getCause());
        assertEquals(DeliveryState.DEAD_LETTERED, d.state());
        assertFalse(renewer.tracking(KEY));
    }

    @Test
    void aStoreFailingToCountTheDeadOwnersAttemptIsAStoreFailure() {
        store.claims.add(Claim.claimed(ClaimResult.TAKEN_OVER, 0));
        store.failing.add("recordFailure");
        Delivery d = lease();
        assertThrows(StoreUnavailableException.class, () -> claim(d));
        assertEquals(DeliveryState.STORE_FAILED, d.state());
    }

    @Test
    void aDeadLetteredKeyIsDeadLetteredAgainAtOnceWithItsReason() {
        store.claims.add(Claim.deadLettered(5, "java.lang.IllegalStateException: card declined"));
        Delivery d = lease();
        AttemptsExhaustedException again = assertThrows(AttemptsExhaustedException.class, () -> claim(d));
        assertEquals(5, again.attempts(), "no new budget");
        assertEquals("java.lang.IllegalStateException: card declined", String.valueOf(again.getCause()));
        assertEquals(DeliveryState.DEAD_LETTERED, d.state());
        assertEquals(List.of("claim"), store.calls, "nothing counted, nothing run");
    }

    @Test
    void aStoreFailingToClaimIsAStoreFailureNotACountedAttempt() {
        store.failing.add("claim");
        Delivery d = lease();
        StoreUnavailableException failure = assertThrows(StoreUnavailableException.class, () -> claim(d));
        assertEquals(DeliveryState.STORE_FAILED, d.state());
        assertTrue(failure.requeue());
        assertSame(failure, failed(d, failure), "the handler never ran: nothing to count, nothing to release");
        assertEquals(List.of("claim"), store.calls);
        assertEquals(List.of("ended:STORE_FAILED"), events.seen);
    }

    // ---- the handler failing

    @Test
    void aFailedAttemptWithinTheBudgetIsCountedAndRetriedAfterItsDelay() {
        Delivery d = lease();
        claim(d);
        store.counts.add(1);
        IdempotencyException answer = failed(d, new IllegalStateException("declined"));
        HandlerFailedException retry = assertInstanceOf(HandlerFailedException.class, answer);
        assertEquals(1, retry.attempt());
        assertEquals(Duration.ofSeconds(1), retry.retryDelay());
        assertEquals(DeliveryState.RETRYING, d.state());
        assertFalse(renewer.tracking(KEY));
        assertSame(answer, failed(d, new IllegalStateException("again")), "ends once: the first answer stands");
        assertSame(answer, assertThrows(HandlerFailedException.class, () -> succeeded(d)), "even when it then succeeds");
        assertEquals(List.of("claim", "recordFailure"), store.calls);
    }

    @Test
    void theLastAttemptOfTheBudgetIsDeadLettered() {
        Delivery d = lease();
        claim(d);
        store.counts.add(3);
        AttemptsExhaustedException spent = assertInstanceOf(AttemptsExhaustedException.class,
                failed(d, new IllegalStateException("declined")));
        assertEquals(3, spent.attempts());
        assertFalse(spent.requeue());
        assertEquals(DeliveryState.DEAD_LETTERED, d.state());
        assertEquals("ended:DEAD_LETTERED", events.seen.get(events.seen.size() - 1));
    }

    @Test
    void aFailureOnAKeyNoLongerThisDeliverysIsAClaimLostAndNotCounted() {
        Delivery d = lease();
        claim(d);
        store.counts.add(0);
        IdempotencyException answer = failed(d, new IllegalStateException("declined"));
        assertTrue(answer.requeue());
        assertEquals(DeliveryState.CLAIM_LOST, d.state());
    }

    @Test
    void aFailureOfTheExtensionsOwnOutcomeAfterTheDeliveryEndedIsAnsweredAsIs() {
        Delivery d = lease();
        d.confirmedEarlier(MessageFacts.NONE, Duration.ZERO);
        DeliveryInProgressException busy = new DeliveryInProgressException(KEY);
        assertSame(busy, failed(d, busy));
        assertEquals(DeliveryState.DUPLICATE, d.state());
    }

    // ---- confirming on its own

    @Test
    void aConfirmTheStoreCannotMakeLeavesTheWorkAckedButUnconfirmed() {
        Delivery d = lease();
        claim(d);
        store.failing.add("confirm");
        succeeded(d); // the work happened: no exception, the message is acked
        assertEquals(DeliveryState.UNCONFIRMED, d.state());
        assertNull(d.answer());
        assertEquals("ended:UNCONFIRMED", events.seen.get(events.seen.size() - 1));
    }

    @Test
    void aConfirmThatFindsTheClaimTakenOverLeavesTheWorkAckedAsAClaimLost() {
        Delivery d = lease();
        claim(d);
        store.confirms.add(false);
        succeeded(d);
        assertEquals(DeliveryState.CLAIM_LOST, d.state());
        assertNull(d.answer(), "acked: the work is done");
    }

    @Test
    void succeedingTwiceConfirmsOnce() {
        Delivery d = lease();
        claim(d);
        succeeded(d);
        succeeded(d);
        assertEquals(List.of("claim", "confirm"), store.calls);
        assertEquals(1, events.seen.stream().filter(e -> e.startsWith("ended")).count());
    }

    // ---- processors

    @Test
    void aProcessorIsConfirmedOnceItsOutputIsAcknowledged() {
        Delivery d = lease();
        claim(d);
        d.awaitOutputAck();
        assertEquals(DeliveryState.AWAITING_OUTPUT_ACK, d.state());
        assertTrue(renewer.tracking(KEY), "renewed while its output is on its way");
        succeeded(d);
        assertEquals(DeliveryState.HANDLED, d.state());
    }

    @Test
    void aProcessorWhoseOutputIsNackedCountsAnAttempt() {
        Delivery d = lease();
        claim(d);
        d.awaitOutputAck();
        store.counts.add(1);
        assertInstanceOf(HandlerFailedException.class, failed(d, new IllegalStateException("nacked downstream")));
        assertEquals(DeliveryState.RETRYING, d.state());
    }

    @Test
    void aCancelledHandlerIsAbandonedItsClaimLeftToRunOut() {
        Delivery d = lease();
        claim(d);
        d.abandoned();
        assertEquals(DeliveryState.ABANDONED, d.state());
        assertFalse(renewer.tracking(KEY), "not renewed: it runs out");
        assertEquals(List.of("claim"), store.calls, "neither confirmed nor released");
        succeeded(d); // a late result changes nothing
        assertEquals(DeliveryState.ABANDONED, d.state());
    }

    // ---- in the handler's transaction

    @Test
    void aNewKeyIsWrittenInTheHandlersTransaction() {
        Delivery d = inTransaction();
        assertTrue(claimInTransaction(d));
        assertEquals(DeliveryState.WRITTEN_IN_TRANSACTION, d.state());
        assertFalse(renewer.tracking(KEY), "no lease: nothing outlives the transaction");
        succeeded(d);
        assertEquals(DeliveryState.HANDLED, d.state());
        assertEquals(List.of("claimInTransaction"), store.calls, "nothing to confirm: the commit did");
    }

    @Test
    void aTransactionThatRolledBackWithoutAnExceptionIsACountedAttempt() {
        Delivery d = inTransaction();
        claimInTransaction(d);
        d.transactionEnded(false);
        assertEquals(DeliveryState.ROLLED_BACK, d.state());
        store.counts.add(1);
        HandlerFailedException retry = assertThrows(HandlerFailedException.class, () -> succeeded(d));
        assertInstanceOf(HandlerRolledBackException.class, retry.getCause());
        assertEquals(DeliveryState.RETRYING, d.state());
    }

    @Test
    void aDeadOwnersClaimFoundInTheTransactionIsTakenOverOnALeaseOutsideIt() {
        store.claims.add(Claim.EXPIRED);
        Delivery d = inTransaction();
        assertFalse(claimInTransaction(d), "the handler does not run in this transaction");
        assertEquals(DeliveryState.EXPIRED, d.state());
        assertFalse(d.state().ended());
        store.claims.add(Claim.claimed(ClaimResult.TAKEN_OVER, 0));
        store.counts.add(1);
        assertTrue(claim(d), "taken over on a lease, its attempt counted");
        assertEquals(DeliveryState.CLAIMED, d.state());
        assertTrue(confirmInTransaction(d));
        succeeded(d);
        assertEquals(DeliveryState.HANDLED, d.state());
    }

    @Test
    void aTransactionRolledBackAfterTheConfirmIsACountedAttempt() {
        Delivery d = lease();
        claim(d);
        confirmInTransaction(d);
        d.transactionEnded(false);
        assertEquals(DeliveryState.ROLLED_BACK, d.state());
        assertInstanceOf(HandlerRolledBackException.class, assertThrows(HandlerFailedException.class, () -> succeeded(d))
                .getCause());
    }

    @Test
    void aCommittedTransactionLeavesTheDeliveryToSucceed() {
        Delivery d = inTransaction();
        claimInTransaction(d);
        d.transactionEnded(true);
        assertEquals(DeliveryState.WRITTEN_IN_TRANSACTION, d.state());
        succeeded(d);
        assertEquals(DeliveryState.HANDLED, d.state());
    }

    @Test
    void aTransactionTheHandlerBrokeIsTheHandlersFailureNotTheStores() {
        Delivery d = lease();
        claim(d);
        store.aborted = true;
        HandlerTransactionAbortedException broken = assertThrows(HandlerTransactionAbortedException.class,
                () -> confirmInTransaction(d));
        assertEquals(DeliveryState.CLAIMED, d.state(), "not a store failure");
        store.counts.add(1);
        assertInstanceOf(HandlerFailedException.class, failed(d, broken), "a counted attempt");
        assertEquals(DeliveryState.RETRYING, d.state());
    }

    @Test
    void aStoreFailingToCountAFailedAttemptIsRequeuedNeverDeadLettered() {
        store.claims.add(Claim.claimed(ClaimResult.NEW, 2)); // the last attempt of a budget of 3
        Delivery d = lease();
        claim(d);
        store.failing.add("recordFailure");
        IdempotencyException answer = failed(d, new IllegalStateException("declined"));
        assertInstanceOf(StoreUnavailableException.class, answer);
        assertTrue(answer.requeue(), "store failures never spend the budget");
        assertEquals(DeliveryState.STORE_FAILED, d.state());
        assertTrue(store.calls.contains("release"), "the claim is given up so that the retry can run");
    }

    @Test
    void aStoreFailingToClaimInTheTransactionIsAStoreFailure() {
        store.failing.add("claimInTransaction");
        Delivery d = inTransaction();
        assertThrows(StoreUnavailableException.class, () -> claimInTransaction(d));
        assertEquals(DeliveryState.STORE_FAILED, d.state());
    }

    @Test
    void aLeaseClaimIsConfirmedInTheHandlersTransaction() {
        Delivery d = lease();
        claim(d);
        assertTrue(confirmInTransaction(d));
        assertEquals(DeliveryState.CONFIRMED_IN_TRANSACTION, d.state());
        succeeded(d);
        assertEquals(DeliveryState.HANDLED, d.state());
        assertEquals(List.of("claim", "confirmInTransaction"), store.calls);
    }

    @Test
    void aLeaseClaimFoundTakenOverInTheTransactionRollsItBackAsAClaimLost() {
        Delivery d = lease();
        claim(d);
        store.confirms.add(false);
        assertFalse(confirmInTransaction(d), "the caller rolls the transaction back");
        assertEquals(DeliveryState.LOST_IN_TRANSACTION, d.state());
        assertThrows(ClaimLostException.class, () -> succeeded(d));
        assertEquals(DeliveryState.CLAIM_LOST, d.state());
    }

    @Test
    void aStoreFailingToConfirmInTheTransactionReleasesTheLeaseOnceTheTransactionEnded() {
        Delivery d = lease();
        claim(d);
        store.failing.add("confirmInTransaction");
        StoreUnavailableException failure = assertThrows(StoreUnavailableException.class, () -> confirmInTransaction(d));
        assertEquals(DeliveryState.STORE_FAILED, d.state());
        assertFalse(store.calls.contains("release"), "not while the transaction is open");
        assertSame(failure, failed(d, failure));
        assertTrue(store.calls.contains("release"), "so that the redelivery runs as soon as the store answers");
    }

    @Test
    void aStoreFailingToReleaseLeavesTheClaimToRunOut() {
        Delivery d = lease();
        claim(d);
        store.failing.add("confirmInTransaction");
        store.failing.add("release");
        StoreUnavailableException failure = assertThrows(StoreUnavailableException.class, () -> confirmInTransaction(d));
        assertSame(failure, failed(d, failure));
        assertEquals(DeliveryState.STORE_FAILED, d.state());
    }

    // ---- the confirmed-keys cache

    @Test
    void aKeyThisProcessConfirmedIsADuplicateWithoutAClaim() {
        Delivery d = lease();
        d.confirmedEarlier(MessageFacts.NONE, Duration.ZERO);
        assertEquals(DeliveryState.DUPLICATE, d.state());
        assertTrue(store.calls.isEmpty());
    }

    // ---- where duplicates come from, and whether their payload is the same

    Delivery arriving(MessageFacts facts, PayloadMismatch onMismatch) {
        DeliveryPolicy policy = new DeliveryPolicy(Duration.ofHours(24), Duration.ofSeconds(30), RETRY, false,
                onMismatch);
        return delivery(IdempotencyMode.LEASE, policy, new Arrival(facts, null, List.of()), null);
    }

    // ---- a delivery cancelled while a store call is on its way

    @Test
    void aClaimAnsweredAfterTheDeliveryWasAbandonedIsGivenUpNotHeld() {
        Delivery d = lease();
        Uni<Boolean> claim = d.claim(); // sent; its answer arrives after the cancellation
        d.abandoned();
        assertFalse(claim.await().indefinitely(), "the handler does not run");
        assertEquals(DeliveryState.ABANDONED, d.state());
        assertFalse(renewer.tracking(KEY), "a claim nobody will end is not renewed");
        assertEquals(List.of("claim", "release"), store.calls);
    }

    @Test
    void aDeliveryAbandonedWhileItsClaimFailsEndsOnceAsAbandoned() {
        store.failing.add("claim");
        Delivery d = lease();
        Uni<Boolean> claim = d.claim(); // sent; the store's failure arrives after the cancellation
        d.abandoned();
        assertThrows(StoreUnavailableException.class, () -> claim.await().indefinitely());
        assertEquals(DeliveryState.ABANDONED, d.state());
        assertEquals(List.of("ended:ABANDONED"), events.seen, "one outcome per delivery");
    }

    @Test
    void aDeliveryAbandonedWhileATakeoverSpendsTheBudgetEndsOnceAsAbandoned() {
        store.claims.add(Claim.claimed(ClaimResult.TAKEN_OVER, 2));
        store.counts.add(3);
        Delivery d = lease();
        Uni<Boolean> claim = d.claim();
        d.abandoned();
        assertThrows(AttemptsExhaustedException.class, () -> claim.await().indefinitely());
        assertEquals(DeliveryState.ABANDONED, d.state());
        assertEquals(1, events.seen.stream().filter(e -> e.startsWith("ended")).count(), events.seen.toString());
    }

    // ---- a channel whose commits are asynchronous: nothing acked before the commit that justifies it is durable

    static final DeliveryPolicy ASYNCHRONOUS = new DeliveryPolicy(Duration.ofHours(24), Duration.ofSeconds(30), RETRY,
            true);

    Delivery committingAsynchronously(IdempotencyMode mode) {
        store.asynchronous = true;
        return delivery(mode, ASYNCHRONOUS, Arrival.unknown(), null);
    }

    @Test
    void aKeyWrittenInAnAsynchronousCommitIsHandledOnceItIsDurable() {
        Delivery d = committingAsynchronously(IdempotencyMode.IN_TRANSACTION);
        assertTrue(claimInTransaction(d));
        d.transactionEnded(true);
        assertEquals(List.of("claimInTransaction"), store.calls, "no flush while the transaction is open");
        succeeded(d);
        assertEquals(DeliveryState.HANDLED, d.state());
        assertEquals(List.of("claimInTransaction", "awaitDurable"), store.calls);
    }

    @Test
    void aConfirmedKeyFoundOnALeaseIsADuplicateOnlyOnceItsCommitIsDurable() {
        store.claims.add(Claim.DONE);
        Delivery d = committingAsynchronously(IdempotencyMode.LEASE);
        assertFalse(claim(d), "the handler does not run");
        assertEquals(DeliveryState.DUPLICATE, d.state());
        assertEquals(List.of("claim", "awaitDurable"), store.calls, "acked as a duplicate after a flush");
    }

    @Test
    void aConfirmedKeyFoundInTheTransactionIsADuplicateOnceTheTransactionEndedAndItsCommitIsDurable() {
        store.claims.add(Claim.DONE);
        Delivery d = committingAsynchronously(IdempotencyMode.IN_TRANSACTION);
        assertFalse(claimInTransaction(d), "the handler does not run");
        assertEquals(DeliveryState.FOUND_DONE, d.state());
        assertFalse(d.state().ended(), "not acked yet");
        assertEquals(List.of("claimInTransaction"), store.calls, "no flush while the transaction is open");
        d.transactionEnded(true);
        succeeded(d);
        assertEquals(DeliveryState.DUPLICATE, d.state());
        assertEquals(List.of("claimInTransaction", "awaitDurable"), store.calls);
    }

    @Test
    void aConfirmedKeyWhoseDurabilityCannotBeLearntIsRetriedNotAcked() {
        store.claims.add(Claim.DONE);
        store.failing.add("awaitDurable");
        Delivery d = committingAsynchronously(IdempotencyMode.LEASE);
        StoreUnavailableException unavailable = assertThrows(StoreUnavailableException.class, () -> claim(d));
        assertTrue(unavailable.requeue(), "redelivered later, never counted");
        assertEquals(DeliveryState.STORE_FAILED, d.state());
        assertEquals(List.of("ended:STORE_FAILED"), events.seen.subList(1, events.seen.size()));
    }

    @Test
    void aConfirmedKeyInAStoreThatCommitsOnlySynchronouslyIsADuplicateAtOnce() {
        store.claims.add(Claim.DONE);
        Delivery d = lease();
        assertFalse(claim(d));
        assertEquals(DeliveryState.DUPLICATE, d.state());
        assertFalse(store.calls.contains("awaitDurable"), "its commit was durable before it was visible");
    }

    // The commit that confirmed it may be another channel's asynchronous one, or this channel's in an instance that
    // still has asynchronous-commit during a rollout.
    @Test
    void aConfirmedKeyOnAChannelWithoutAsynchronousCommitIsADuplicateOnlyOnceItsCommitIsDurable() {
        store.asynchronous = true;
        store.claims.add(Claim.DONE);
        Delivery d = lease();
        assertFalse(claim(d), "the handler does not run");
        assertEquals(DeliveryState.DUPLICATE, d.state());
        assertEquals(List.of("claim", "awaitDurable"), store.calls, "acked as a duplicate after a flush");
    }

    // ---- while the key storage changes: the key's other form

    static final ScopedKey OTHER_FORM = new ScopedKey("payments", "hmac:other-form");

    Delivery changingForm() {
        return delivery(IdempotencyMode.LEASE, POLICY, new Arrival(new MessageFacts("m-2", "fp-A"), null, List.of()),
                OTHER_FORM);
    }

    @Test
    void aKeyConfirmedInItsOtherFormIsADuplicateAndConfirmedInItsCurrentOne() {
        store.peeks.add(Claim.done(new MessageFacts("m-1", "fp-A"), Duration.ofHours(2)));
        Delivery d = changingForm();
        assertTrue(d.changingKeyForm());
        assertFalse(claim(d));
        assertEquals(DeliveryState.DUPLICATE, d.state());
        assertEquals(List.of("claim", "peek:" + OTHER_FORM, "confirm"), store.calls);
        assertTrue(events.seen.contains("duplicate:REPUBLISH:SAME:PT2H"), events.seen.toString());
    }

    @Test
    void aKeyHeldOrDeadLetteredInItsOtherFormKeepsThatAnswerAndItsNewClaimIsGivenUp() {
        store.peeks.add(Claim.BUSY);
        Delivery busy = changingForm();
        assertThrows(DeliveryInProgressException.class, () -> claim(busy));
        assertEquals(List.of("claim", "peek:" + OTHER_FORM, "release"), store.calls);

        store.calls.clear();
        store.peeks.add(Claim.deadLettered(3, "boom"));
        Delivery dead = changingForm();
        assertThrows(AttemptsExhaustedException.class, () -> claim(dead));
        assertEquals(DeliveryState.DEAD_LETTERED, dead.state());
        assertEquals(List.of("claim", "peek:" + OTHER_FORM, "release"), store.calls);
    }

    @Test
    void aKeyUnknownInItsOtherFormRuns() {
        Delivery d = changingForm();
        assertTrue(claim(d));
        assertEquals(List.of("claim", "peek:" + OTHER_FORM), store.calls);
    }

    @Test
    void theSameIdAndPayloadAgainIsARedeliveryOfTheSamePayload() {
        store.claims.add(Claim.done(new MessageFacts("m-1", "fp-A"), Duration.ofSeconds(3)));
        Delivery d = arriving(new MessageFacts("m-1", "fp-A"), PayloadMismatch.WARN);
        assertFalse(claim(d));
        assertEquals(DeliveryState.DUPLICATE, d.state());
        assertEquals(List.of("claimAnswered", "duplicate:REDELIVERY:SAME:PT3S", "ended:DUPLICATE"), events.seen);
    }

    @Test
    void anotherIdWithAnotherPayloadIsARepublishWhosePayloadMismatchesAndIsAckedWhenWarned() {
        store.claims.add(Claim.done(new MessageFacts("m-1", "fp-A"), Duration.ofMinutes(2)));
        Delivery d = arriving(new MessageFacts("m-2", "fp-B"), PayloadMismatch.WARN);
        assertFalse(claim(d));
        assertEquals(DeliveryState.DUPLICATE, d.state());
        assertEquals(List.of("claimAnswered", "duplicate:REPUBLISH:MISMATCH:PT2M", "ended:DUPLICATE"), events.seen);
    }

    @Test
    void aMismatchingPayloadIsDeadLetteredWithoutRunningWhenSoConfigured() {
        store.claims.add(Claim.done(new MessageFacts("m-1", "fp-A"), Duration.ofMinutes(2)));
        Delivery d = arriving(new MessageFacts("m-2", "fp-B"), PayloadMismatch.DEAD_LETTER);
        PayloadMismatchException e = assertThrows(PayloadMismatchException.class, () -> claim(d));
        assertFalse(e.requeue());
        assertEquals("m-1", e.firstMessageId());
        assertEquals("m-2", e.messageId());
        assertEquals(DeliveryState.PAYLOAD_MISMATCH, d.state());
        assertEquals("payload-mismatch", DeadLetterHeaders.outcome(e));
        assertEquals(List.of("claim"), store.calls); // nothing written: the key stays as it was
    }

    @Test
    void aKeyWrittenWithoutFactsIsNeverAMismatch() {
        store.claims.add(Claim.DONE);
        Delivery d = arriving(new MessageFacts("m-2", "fp-B"), PayloadMismatch.DEAD_LETTER);
        assertFalse(claim(d));
        assertEquals(DeliveryState.DUPLICATE, d.state());
        assertEquals(List.of("claimAnswered", "duplicate:UNKNOWN:UNKNOWN:null", "ended:DUPLICATE"), events.seen);
    }

    @Test
    void aDuplicateFromTheConfirmedKeysCacheIsComparedToo() {
        Delivery d = arriving(new MessageFacts("m-1", "fp-B"), PayloadMismatch.DEAD_LETTER);
        assertThrows(PayloadMismatchException.class,
                () -> d.confirmedEarlier(new MessageFacts("m-1", "fp-A"), Duration.ofSeconds(1)));
        assertEquals(List.of("duplicate:REDELIVERY:MISMATCH:PT1S", "ended:PAYLOAD_MISMATCH"), events.seen);
        assertTrue(store.calls.isEmpty());
    }

    @Test
    void aClaimTakenOverIsReportedAsATakeover() {
        store.claims.add(Claim.claimed(ClaimResult.TAKEN_OVER, 0));
        Delivery d = arriving(new MessageFacts("m-1", "fp-A"), PayloadMismatch.WARN);
        assertTrue(claim(d));
        assertTrue(events.seen.contains("tookOver"));
    }

    /** What a delivery reports. */
    static final class Events implements DeliveryListener {
        final List<String> seen = new ArrayList<>();

        @Override
        public void claimAnswered(DeliveryView delivery, long nanos) {
            seen.add("claimAnswered");
        }

        @Override
        public void tookOver(DeliveryView delivery) {
            seen.add("tookOver");
        }

        @Override
        public void duplicate(DeliveryView delivery, DuplicateOrigin origin, PayloadMatch payload, Duration age,
                MessageFacts facts) {
            seen.add("duplicate:" + origin + ":" + payload + ":" + age);
        }

        @Override
        public void ended(DeliveryView delivery, Throwable cause) {
            seen.add("ended:" + delivery.state());
        }
    }

    /** A store answering what the test queued (a new claim, a confirm, by default) and failing where it says. */
    static final class ScriptedStore implements IdempotencyStore {
        final List<String> calls = new ArrayList<>();
        final List<String> failing = new ArrayList<>();
        final List<Claim> claims = new ArrayList<>();
        final List<Boolean> confirms = new ArrayList<>();
        final List<Integer> counts = new ArrayList<>();
        volatile boolean aborted;
        /** Whether some commit of its keys may return before it is durable (the database store's). */
        boolean asynchronous;

        @Override
        public boolean commitsAsynchronously() {
            return asynchronous;
        }

        private void call(String operation) {
            calls.add(operation);
            if (failing.contains(operation)) {
                throw new IllegalStateException(operation + " failed: connection refused");
            }
        }

        private Claim nextClaim() {
            return claims.isEmpty() ? Claim.claimed(ClaimResult.NEW, 0) : claims.remove(0);
        }

        @Override
        public Claim claim(ScopedKey key, String token, Duration lease, Duration retention) {
            call("claim");
            return nextClaim();
        }

        @Override
        public Claim claimInTransaction(ScopedKey key, String token, Duration retention, boolean asynchronousCommit) {
            call("claimInTransaction");
            return nextClaim();
        }

        final List<Claim> peeks = new ArrayList<>();

        @Override
        public Claim peek(ScopedKey key) {
            call("peek:" + key);
            return peeks.isEmpty() ? Claim.claimed(ClaimResult.NEW, 0) : peeks.remove(0);
        }

        @Override
        public boolean confirm(ScopedKey key, String token, Duration retention) {
            call("confirm");
            return confirms.isEmpty() || confirms.remove(0);
        }

        @Override
        public boolean confirmInTransaction(ScopedKey key, String token, Duration retention) {
            call("confirmInTransaction");
            if (aborted) {
                throw new HandlerTransactionAbortedException("aborted by the handler", null);
            }
            return confirms.isEmpty() || confirms.remove(0);
        }

        @Override
        public int recordFailure(ScopedKey key, String token, String failure, int maxAttempts, Duration retention) {
            call("recordFailure");
            return counts.isEmpty() ? 1 : counts.remove(0);
        }

        @Override
        public boolean release(ScopedKey key, String token) {
            call("release");
            return true;
        }

        @Override
        public void renew(Collection<HeldClaim> claims) {
        }

        @Override
        public int purgeExpired(int limit) {
            return 0;
        }

        @Override
        public boolean joinsTransactions() {
            return true;
        }

        @Override
        public void awaitDurable() {
            call("awaitDurable");
        }
    }
}
