package io.quarkiverse.idempotency.deployment;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.runtime.IdempotentMethodInfo.Returns;
import io.quarkus.runtime.configuration.DurationConverter;

/**
 * The rules of a method's shape, one small check each over its {@link MethodFacts}. The first three decide whether
 * the others can be asked at all: a method that is not {@code @Incoming}, streams, or takes nothing breaks only those.
 */
final class MethodRules {

    // The rules that need a method of the right shape, asked once the shape is known to be right.
    private static final List<Function<MethodFacts, Optional<IdempotencyDefinitionException>>> RULES = List.of(
            MethodRules::checkAcknowledgment, MethodRules::checkMessageProcessor,
            MethodRules::checkMessageReturnsStage, MethodRules::checkTransactionalSync, MethodRules::checkEventLoop,
            MethodRules::checkNonBlocking, MethodRules::checkTransactionalProcessor, MethodRules::checkInTransaction,
            MethodRules::checkReactiveAndJta, MethodRules::checkReactiveBlocking, MethodRules::checkReactiveShape,
            MethodRules::checkReactiveLease, MethodRules::checkOutboxOutput,
            m -> checkDuration(m, "retention", m.retention()), m -> checkDuration(m, "lease", m.lease()),
            MethodRules::checkAttempts);

    private MethodRules() {
    }

    /** @return every rule the method breaks */
    static List<IdempotencyDefinitionException> check(MethodFacts method) {
        List<IdempotencyDefinitionException> broken = new ArrayList<>();
        Optional<IdempotencyDefinitionException> notIncoming = checkIncoming(method);
        if (notIncoming.isPresent()) {
            return List.of(notIncoming.get()); // not a consumer at all: nothing else to say
        }
        checkAccessible(method).ifPresent(broken::add);
        Optional<IdempotencyDefinitionException> shape = checkStream(method).or(() -> checkMessage(method));
        if (shape.isPresent()) {
            broken.add(shape.get()); // the other rules ask about a message this method does not take
            return broken;
        }
        for (var rule : RULES) {
            rule.apply(method).ifPresent(broken::add);
        }
        return broken;
    }

    /**
     * @param memoryStore whether the memory store is selected: it cannot write keys in a transaction
     * @return the rule a forced {@code IN_TRANSACTION} breaks with the memory store
     */
    static Optional<IdempotencyDefinitionException> checkInTransactionStore(MethodFacts m, boolean memoryStore) {
        return m.mode() == IdempotencyMode.IN_TRANSACTION && memoryStore
                ? broken(Rule.IN_TRANSACTION_MEMORY_STORE, m)
                : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkIncoming(MethodFacts m) {
        return m.channels().isEmpty() ? broken(Rule.NOT_INCOMING, m) : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkStream(MethodFacts m) {
        return m.stream() ? broken(Rule.STREAM, m) : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkMessage(MethodFacts m) {
        return m.takesNothing() ? broken(Rule.NO_MESSAGE, m) : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkAccessible(MethodFacts m) {
        return m.inaccessible() ? broken(Rule.INACCESSIBLE, m) : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkAcknowledgment(MethodFacts m) {
        String ack = m.acknowledgment();
        boolean early = "PRE_PROCESSING".equals(ack) || (!m.messageParameter() && "MANUAL".equals(ack));
        return early ? broken(Rule.EARLY_ACKNOWLEDGMENT, m, ack) : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkMessageProcessor(MethodFacts m) {
        return m.messageParameter() && m.processor() ? broken(Rule.MESSAGE_PROCESSOR, m) : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkMessageReturnsStage(MethodFacts m) {
        return m.messageParameter() && m.returns() == Returns.SYNC ? broken(Rule.MESSAGE_WITHOUT_STAGE, m)
                : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkTransactionalSync(MethodFacts m) {
        return m.transactional() && !m.reactiveTransactional() && (m.returns() != Returns.SYNC || m.messageParameter())
                ? broken(Rule.TRANSACTIONAL_ASYNC, m)
                : Optional.empty();
    }

    // A method on the event loop is settled by its stage alone: one that takes the Message acks it itself, and a
    // processor's key waits for its output's ack, neither of which the non-blocking path follows.
    static Optional<IdempotencyDefinitionException> checkEventLoop(MethodFacts m) {
        return m.onEventLoop() && (m.messageParameter() || m.processor())
                ? broken(Rule.EVENT_LOOP, m, m.method().returnType().name().withoutPackagePrefix())
                : Optional.empty();
    }

    /**
     * @param keysWithoutBlocking whether the selected store's lease-mode calls can be made without blocking
     * @return the rule a method on the event loop breaks when its store calls would block it
     */
    static Optional<IdempotencyDefinitionException> checkEventLoopStore(MethodFacts m, boolean keysWithoutBlocking) {
        return m.onEventLoop() && !m.messageParameter() && !m.processor() && !keysWithoutBlocking
                ? broken(Rule.EVENT_LOOP_STORE, m, m.method().returnType().name().withoutPackagePrefix())
                : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkNonBlocking(MethodFacts m) {
        return m.returns() == Returns.SYNC && m.nonBlocking() ? broken(Rule.NON_BLOCKING, m) : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkTransactionalProcessor(MethodFacts m) {
        return m.processor() && m.transactional() ? broken(Rule.TRANSACTIONAL_PROCESSOR, m) : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkInTransaction(MethodFacts m) {
        return m.mode() == IdempotencyMode.IN_TRANSACTION && !m.canWriteKeyInTransaction()
                ? broken(Rule.IN_TRANSACTION_INELIGIBLE, m)
                : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkReactiveAndJta(MethodFacts m) {
        return m.reactiveTransactional() && m.transactional() ? broken(Rule.REACTIVE_AND_JTA, m) : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkReactiveBlocking(MethodFacts m) {
        return m.reactiveTransactional() && m.blocking() ? broken(Rule.REACTIVE_BLOCKING, m) : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkReactiveShape(MethodFacts m) {
        return m.reactiveTransactional() && (m.returns() != Returns.UNI || m.messageParameter() || m.processor())
                ? broken(Rule.REACTIVE_SHAPE, m)
                : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkReactiveLease(MethodFacts m) {
        return m.reactiveTransactional() && m.mode() == IdempotencyMode.LEASE ? broken(Rule.REACTIVE_LEASE, m)
                : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkOutboxOutput(MethodFacts m) {
        return m.throughOutbox() && !m.outboxOutputFits() ? broken(Rule.OUTBOX_OUTPUT_SHAPE, m) : Optional.empty();
    }

    static Optional<IdempotencyDefinitionException> checkDuration(MethodFacts m, String member, String text) {
        if (text.isEmpty() || text.contains("${")) {
            return Optional.empty(); // unset, or a configuration expression: resolved, and checked, at startup
        }
        try {
            if (!DurationConverter.parseDuration(text).isNegative() && !DurationConverter.parseDuration(text).isZero()) {
                return Optional.empty();
            }
        } catch (RuntimeException e) {
            // not a duration at all
        }
        return broken(Rule.INVALID_DURATION, m, member, text);
    }

    static Optional<IdempotencyDefinitionException> checkAttempts(MethodFacts m) {
        return m.maxAttempts() < 0 ? broken(Rule.NEGATIVE_ATTEMPTS, m, m.maxAttempts()) : Optional.empty();
    }

    private static Optional<IdempotencyDefinitionException> broken(Rule rule, MethodFacts m, Object... details) {
        return Optional.of(new IdempotencyDefinitionException(rule, m.method(), details));
    }
}
