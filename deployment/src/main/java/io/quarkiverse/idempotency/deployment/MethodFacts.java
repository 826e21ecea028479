package io.quarkiverse.idempotency.deployment;

import static io.quarkiverse.idempotency.deployment.IdempotencyDotNames.*;

import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationValue;
import org.jboss.jandex.DotName;
import org.jboss.jandex.MethodInfo;
import org.jboss.jandex.Type;

import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.runtime.IdempotentMethodInfo.Returns;

/**
 * What the rules need to know about one {@code @Idempotent} method, read from the index once.
 *
 * @param method the method
 * @param channels its {@code @Incoming} channels
 * @param inaccessible whether it is private or static
 * @param stream whether it consumes or produces a stream
 * @param messageParameter whether its first parameter is a {@code Message} (or a connector's message type)
 * @param returns how it returns
 * @param processor whether it has {@code @Outgoing} and its output goes downstream as a message (not through the outbox)
 * @param blocking whether it is {@code @Blocking} or {@code @RunOnVirtualThread}
 * @param unordered whether its messages may run concurrently: {@code @Blocking(ordered = false)} or
 *        {@code @RunOnVirtualThread}
 * @param nonBlocking whether it is {@code @NonBlocking}
 * @param transactional whether it (or its class) is {@code @Transactional}
 * @param startsTransaction whether a transaction is always active when its body runs
 * @param acknowledgment its {@code @Acknowledgment} strategy, or {@code null}
 * @param mode the mode it asks for
 * @param keyFunction the key function's class
 * @param retention the annotation's retention, trimmed (empty when not set)
 * @param lease the annotation's lease, trimmed (empty when not set)
 * @param maxAttempts the annotation's attempt budget (0 when not set)
 * @param scope the annotation's scope, trimmed (empty for the channel)
 * @param reactiveUnit the persistence unit of its (or its class's) {@code @WithTransaction}, Hibernate Reactive's
 *        transaction, or empty when it has none
 * @param reactiveStateless whether that {@code @WithTransaction} opens a stateless session
 * @param throughOutbox whether it is {@code @ThroughOutbox}: its output is written to the outbox in its transaction
 * @param outgoing its {@code @Outgoing} channel, or empty when it has none
 */
record MethodFacts(MethodInfo method, List<String> channels, boolean inaccessible, boolean stream,
        boolean messageParameter, Returns returns, boolean processor, boolean blocking, boolean unordered,
        boolean nonBlocking, boolean transactional, boolean startsTransaction, String acknowledgment,
        IdempotencyMode mode, DotName keyFunction, String retention, String lease, int maxAttempts, String scope,
        String reactiveUnit, boolean reactiveStateless, boolean throughOutbox, String outgoing) {

    /** SmallRye's types that carry metadata or a destination with the payload. */
    private static final Set<DotName> MESSAGE_LIKE = Set.of(GENERIC_PAYLOAD,
            DotName.createSimple("io.smallrye.reactive.messaging.Targeted"),
            DotName.createSimple("io.smallrye.reactive.messaging.TargetedMessages"),
            DotName.createSimple("io.smallrye.reactive.messaging.kafka.Record"));
    private static final DotName VOID = DotName.createSimple("java.lang.Void");

    private static final Set<DotName> STREAM_TYPES = Set.of(MULTI, PUBLISHER, FLOW_PUBLISHER, PUBLISHER_BUILDER,
            PROCESSOR_BUILDER);

    static MethodFacts read(MethodInfo method, AnnotationInstance idempotent) {
        boolean stream = STREAM_TYPES.contains(method.returnType().name());
        for (Type parameter : method.parameterTypes()) {
            stream |= STREAM_TYPES.contains(parameter.name());
        }
        AnnotationInstance blocking = method.declaredAnnotation(MESSAGING_BLOCKING);
        boolean virtualThread = method.hasDeclaredAnnotation(RUN_ON_VIRTUAL_THREAD);
        AnnotationInstance ack = method.declaredAnnotation(ACKNOWLEDGMENT);
        AnnotationValue mode = idempotent.value("mode");
        AnnotationValue key = idempotent.value("key");
        AnnotationValue maxAttempts = idempotent.value("maxAttempts");
        AnnotationInstance outgoing = method.declaredAnnotation(OUTGOING);
        boolean throughOutbox = method.hasDeclaredAnnotation(THROUGH_OUTBOX);
        return new MethodFacts(method, channels(method),
                Modifier.isPrivate(method.flags()) || Modifier.isStatic(method.flags()), stream,
                method.parametersCount() > 0 && isMessage(method.parameterType(0)), returns(method.returnType()),
                outgoing != null && !throughOutbox,
                method.hasDeclaredAnnotation(BLOCKING) || blocking != null || virtualThread, unordered(method),
                method.hasDeclaredAnnotation(NON_BLOCKING),
                method.hasDeclaredAnnotation(TRANSACTIONAL) || method.declaringClass().hasDeclaredAnnotation(TRANSACTIONAL),
                startsTransaction(method), ack == null ? null : ack.value().asEnum(),
                mode == null ? IdempotencyMode.AUTO : IdempotencyMode.valueOf(mode.asEnum()),
                key == null ? MESSAGE_ID_KEY : key.asClass().name(), text(idempotent, "retention"),
                text(idempotent, "lease"), maxAttempts == null ? 0 : maxAttempts.asInt(), text(idempotent, "scope"),
                reactiveUnit(method), reactiveStateless(method), throughOutbox,
                outgoing == null ? "" : outgoing.value().asString());
    }

    private static AnnotationInstance withTransaction(MethodInfo method) {
        AnnotationInstance withTransaction = method.declaredAnnotation(WITH_TRANSACTION);
        return withTransaction != null ? withTransaction : method.declaringClass().declaredAnnotation(WITH_TRANSACTION);
    }

    private static String reactiveUnit(MethodInfo method) {
        AnnotationInstance withTransaction = withTransaction(method);
        if (withTransaction == null) {
            return "";
        }
        AnnotationValue unit = withTransaction.value();
        return unit == null ? "<default>" : unit.asString();
    }

    private static boolean reactiveStateless(MethodInfo method) {
        AnnotationInstance withTransaction = withTransaction(method);
        AnnotationValue stateless = withTransaction == null ? null : withTransaction.value("stateless");
        return stateless != null && stateless.asBoolean();
    }

    /**
     * @return whether the method runs on the event loop in lease mode: it returns {@code Uni} or
     *         {@code CompletionStage} without {@code @Blocking} and without a Hibernate Reactive transaction
     */
    boolean onEventLoop() {
        return returns != Returns.SYNC && !blocking && !reactiveTransactional();
    }

    /** @return whether it (or its class) is {@code @WithTransaction}: it runs in a Hibernate Reactive transaction */
    boolean reactiveTransactional() {
        return !reactiveUnit.isEmpty();
    }

    /**
     * @return whether the method's messages may run concurrently, in any order: {@code @Blocking(ordered = false)} or
     *         {@code @RunOnVirtualThread}
     */
    static boolean unordered(MethodInfo method) {
        AnnotationInstance blocking = method.declaredAnnotation(MESSAGING_BLOCKING);
        return method.hasDeclaredAnnotation(RUN_ON_VIRTUAL_THREAD)
                || (blocking != null && blocking.value("ordered") != null && !blocking.value("ordered").asBoolean());
    }

    /** @return {@code class#method}, for messages and for runtime */
    String description() {
        return method.declaringClass().name() + "#" + method.name();
    }

    /** @return whether the method takes no parameter at all */
    boolean takesNothing() {
        return method.parametersCount() == 0;
    }

    /** @return whether the key can be written in the method's own transaction */
    boolean canWriteKeyInTransaction() {
        boolean startsOne = reactiveTransactional() ? returns == Returns.UNI && !transactional && !blocking
                : transactional && startsTransaction && returns == Returns.SYNC;
        return startsOne && !messageParameter && !processor;
    }

    /**
     * @return whether a {@code @ThroughOutbox} method has the shape whose output the outbox can write: a processor
     *         that takes the payload and returns the output in a transaction it starts
     */
    boolean outboxOutputFits() {
        boolean inTransaction = reactiveTransactional() ? returns == Returns.UNI && !transactional && !blocking
                : transactional && opensTransaction(method) && returns == Returns.SYNC;
        return !outgoing.isEmpty() && !method.hasDeclaredAnnotation(OUTGOINGS) && inTransaction && !messageParameter
                && returnsPayload();
    }

    /**
     * @return whether it returns a payload the outbox can store (or a {@code Uni} of one): not {@code void} or
     *         {@code Void}, not a {@code Message} or another of SmallRye's message-like types, whose metadata the outbox
     *         would not keep
     */
    private boolean returnsPayload() {
        Type type = method.returnType();
        if (type.name().equals(UNI)) {
            if (type.kind() != Type.Kind.PARAMETERIZED_TYPE) {
                return false;
            }
            type = type.asParameterizedType().arguments().get(0);
        }
        if (type.kind() == Type.Kind.WILDCARD_TYPE) {
            type = type.asWildcardType().extendsBound();
        }
        return type.kind() != Type.Kind.VOID && !type.name().equals(VOID) && !isMessage(type)
                && !MESSAGE_LIKE.contains(type.name());
    }

    // @Transactional without a type, REQUIRED or REQUIRES_NEW: a transaction is opened for the method when none is active.
    // MANDATORY is not: SmallRye calls the method without one.
    private static boolean opensTransaction(MethodInfo method) {
        AnnotationInstance transactional = method.declaredAnnotation(TRANSACTIONAL);
        if (transactional == null) {
            transactional = method.declaringClass().declaredAnnotation(TRANSACTIONAL);
        }
        AnnotationValue type = transactional == null ? null : transactional.value();
        return transactional != null && (type == null || Set.of("REQUIRED", "REQUIRES_NEW").contains(type.asEnum()));
    }

    private static String text(AnnotationInstance idempotent, String member) {
        AnnotationValue value = idempotent.value(member);
        return value == null ? "" : value.asString().trim();
    }

    // A Message, or a connector's own message type (IncomingRabbitMQMessage, ...).
    private static boolean isMessage(Type type) {
        if (type.name().equals(MESSAGE)) {
            return true;
        }
        if (type.kind() != Type.Kind.CLASS && type.kind() != Type.Kind.PARAMETERIZED_TYPE) {
            return false;
        }
        try {
            Class<?> loaded = Class.forName(type.name().toString(), false,
                    Thread.currentThread().getContextClassLoader());
            return org.eclipse.microprofile.reactive.messaging.Message.class.isAssignableFrom(loaded);
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    // @Transactional without a type, or with one that always has a transaction when the method body runs.
    private static boolean startsTransaction(MethodInfo method) {
        AnnotationInstance transactional = method.declaredAnnotation(TRANSACTIONAL);
        if (transactional == null) {
            transactional = method.declaringClass().declaredAnnotation(TRANSACTIONAL);
        }
        if (transactional == null) {
            return false;
        }
        AnnotationValue type = transactional.value();
        return type == null || Set.of("REQUIRED", "REQUIRES_NEW", "MANDATORY").contains(type.asEnum());
    }

    private static Returns returns(Type type) {
        DotName name = type.name();
        if (name.equals(UNI)) {
            return Returns.UNI;
        }
        if (name.equals(COMPLETION_STAGE) || name.equals(COMPLETABLE_FUTURE)) {
            return Returns.COMPLETION_STAGE;
        }
        return Returns.SYNC;
    }

    private static List<String> channels(MethodInfo method) {
        List<String> channels = new ArrayList<>();
        AnnotationInstance incoming = method.declaredAnnotation(INCOMING);
        if (incoming != null) {
            channels.add(incoming.value().asString());
        }
        AnnotationInstance incomings = method.declaredAnnotation(INCOMINGS);
        if (incomings != null) {
            for (AnnotationInstance nested : incomings.value().asNestedArray()) {
                channels.add(nested.value().asString());
            }
        }
        return channels;
    }
}
