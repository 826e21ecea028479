package io.quarkiverse.idempotency.deployment;

import static io.quarkiverse.idempotency.deployment.IdempotencyDotNames.*;

import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationTarget;
import org.jboss.jandex.AnnotationValue;
import org.jboss.jandex.ClassInfo;
import org.jboss.jandex.DotName;
import org.jboss.jandex.IndexView;
import org.jboss.jandex.MethodInfo;
import org.jboss.jandex.ParameterizedType;
import org.jboss.jandex.Type;

import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.deployment.exception.AcknowledgmentStrategyException;
import io.quarkiverse.idempotency.deployment.exception.EventLoopException;
import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.InaccessibleMethodException;
import io.quarkiverse.idempotency.deployment.exception.InvalidDurationException;
import io.quarkiverse.idempotency.deployment.exception.KeyFunctionException;
import io.quarkiverse.idempotency.deployment.exception.NotIncomingMethodException;
import io.quarkiverse.idempotency.deployment.exception.StoreConfigurationException;
import io.quarkiverse.idempotency.deployment.exception.StreamSignatureException;
import io.quarkiverse.idempotency.deployment.exception.UnsupportedSignatureException;
import io.quarkiverse.idempotency.runtime.IdempotentMethodInfo;
import io.quarkiverse.idempotency.runtime.IdempotentMethodInfo.Returns;
import io.quarkus.runtime.configuration.DurationConverter;

/**
 * Reads every {@code @Idempotent} in the index, checks it against the rules, and describes the valid methods.
 */
final class IdempotentMethodAnalyzer {

    private static final Set<DotName> STREAM_TYPES = Set.of(MULTI, PUBLISHER, FLOW_PUBLISHER, PUBLISHER_BUILDER,
            PROCESSOR_BUILDER);

    private final IndexView index;
    private final List<IdempotentMethodsBuildItem.Entry> methods = new ArrayList<>();
    private final List<MethodInfo> invalidMethods = new ArrayList<>();
    private final List<IdempotencyDefinitionException> errors = new ArrayList<>();

    private final boolean memoryStore;

    /**
     * @param memoryStore whether the memory store is the selected store (it cannot write keys in a transaction)
     */
    IdempotentMethodAnalyzer(IndexView index, boolean memoryStore) {
        this.index = index;
        this.memoryStore = memoryStore;
    }

    IdempotentMethodsBuildItem analyse() {
        List<AnnotationInstance> annotations = new ArrayList<>(index.getAnnotations(IDEMPOTENT));
        annotations.sort(Comparator.comparing(IdempotentMethodAnalyzer::describe));
        for (AnnotationInstance annotation : annotations) {
            if (annotation.target().kind() == AnnotationTarget.Kind.CLASS) {
                ClassInfo type = annotation.target().asClass();
                if (!type.isAnnotation() && !type.name().toString().startsWith("io.quarkiverse.idempotency.runtime.")) {
                    errors.add(new NotIncomingMethodException("@Idempotent is not allowed on a class",
                            "class=" + type.name(), "put it on each @Incoming method that must be idempotent"));
                }
            } else if (annotation.target().kind() == AnnotationTarget.Kind.METHOD) {
                int errorsBefore = errors.size();
                analyse(annotation.target().asMethod(), annotation);
                if (errors.size() > errorsBefore) {
                    invalidMethods.add(annotation.target().asMethod());
                }
            }
        }
        return new IdempotentMethodsBuildItem(methods, invalidMethods, errors);
    }

    private void analyse(MethodInfo method, AnnotationInstance idempotent) {
        String where = "class=" + method.declaringClass().name() + ", method=" + method.name();
        int errorsBefore = errors.size();
        List<String> channels = channels(method);
        if (channels.isEmpty()) {
            errors.add(new NotIncomingMethodException("@Idempotent is only allowed on @Incoming methods", where,
                    "add @Incoming or remove @Idempotent"));
            return;
        }
        if (Modifier.isPrivate(method.flags()) || Modifier.isStatic(method.flags())) {
            errors.add(new InaccessibleMethodException("@Idempotent method must be neither private nor static", where,
                    "make it a non-static method with package, protected or public visibility so it can be intercepted"));
        }
        Type returnType = method.returnType();
        boolean stream = STREAM_TYPES.contains(returnType.name());
        for (Type parameter : method.parameterTypes()) {
            stream |= STREAM_TYPES.contains(parameter.name());
        }
        if (stream) {
            errors.add(new StreamSignatureException(
                    "@Idempotent method consumes or produces a stream (Multi, Publisher or a stream builder), which has"
                            + " no per-message outcome",
                    where, "take one payload or Message and return void, a value, Uni or CompletionStage"));
            return;
        }
        if (method.parametersCount() == 0) {
            errors.add(new UnsupportedSignatureException("@Idempotent method takes no message", where,
                    "take the payload or the Message as its first parameter"));
            return;
        }
        boolean messageParameter = isMessage(method.parameterType(0));
        Returns returns = returns(returnType);
        boolean processor = method.hasDeclaredAnnotation(OUTGOING);
        boolean blocking = method.hasDeclaredAnnotation(BLOCKING) || method.hasDeclaredAnnotation(MESSAGING_BLOCKING)
                || method.hasDeclaredAnnotation(RUN_ON_VIRTUAL_THREAD);
        boolean transactional = method.hasDeclaredAnnotation(TRANSACTIONAL)
                || method.declaringClass().hasDeclaredAnnotation(TRANSACTIONAL);

        AnnotationInstance ack = method.declaredAnnotation(ACKNOWLEDGMENT);
        if (ack != null) {
            String strategy = ack.value().asEnum();
            if ("PRE_PROCESSING".equals(strategy) || (!messageParameter && "MANUAL".equals(strategy))) {
                errors.add(new AcknowledgmentStrategyException("@Idempotent method uses @Acknowledgment(" + strategy
                        + "), which acknowledges the message before its outcome is known", where,
                        "remove @Acknowledgment or use POST_PROCESSING"));
            }
        }
        if (messageParameter && processor) {
            errors.add(new UnsupportedSignatureException(
                    "@Idempotent method takes a Message and produces one (@Outgoing), so the outcome of the input"
                            + " cannot be known before the output is acknowledged downstream",
                    where, "take the payload and return the output payload (a duplicate then emits nothing)"));
        }
        if (messageParameter && returns == Returns.SYNC) {
            errors.add(new UnsupportedSignatureException(
                    "@Idempotent method takes a Message but returns neither CompletionStage nor Uni", where,
                    "return the CompletionStage<Void> of message.ack()/nack(), or take the payload instead"));
        }
        if (transactional && (returns != Returns.SYNC || messageParameter)) {
            errors.add(new UnsupportedSignatureException(
                    "@Idempotent @Transactional method is asynchronous or takes a Message, so the key cannot be"
                            + " confirmed inside its transaction",
                    where, "take the payload and return void or a value (it runs on a worker thread), or drop"
                            + " @Transactional and open the transaction inside the method"));
        }
        if (returns != Returns.SYNC && !blocking) {
            errors.add(new EventLoopException("@Idempotent method returns " + returnType.name().withoutPackagePrefix()
                    + " and would run on the event loop, where the store's blocking calls are not allowed", where,
                    "annotate it with @Blocking (or @RunOnVirtualThread)"));
        }
        if (returns == Returns.SYNC && method.hasDeclaredAnnotation(NON_BLOCKING)) {
            errors.add(new EventLoopException(
                    "@Idempotent method is @NonBlocking, where the store's blocking calls are not allowed", where,
                    "remove @NonBlocking"));
        }

        if (processor && transactional) {
            errors.add(new UnsupportedSignatureException(
                    "@Idempotent processor is @Transactional: its transaction commits before its output is accepted"
                            + " downstream, so a failed send would either lose the output (the key is confirmed) or"
                            + " repeat the work (it is not)",
                    where, "remove @Transactional (the key is then confirmed once the output is acknowledged"
                            + " downstream), or write the output in the transaction (an outbox) from a consumer"));
        }
        IdempotencyMode mode = mode(idempotent, method, transactional, returns, messageParameter, processor, where);
        String keyFunction = keyFunction(idempotent, method, messageParameter, where);
        String retention = duration(idempotent, "retention", where);
        String lease = duration(idempotent, "lease", where);
        AnnotationValue maxAttemptsValue = idempotent.value("maxAttempts");
        int maxAttempts = maxAttemptsValue == null ? 0 : maxAttemptsValue.asInt();
        if (maxAttempts < 0) {
            errors.add(new InvalidDurationException("@Idempotent(maxAttempts = " + maxAttempts + ") is negative", where,
                    "give the number of attempts (at least 1), or 0 for quarkus.idempotency.retry.max-attempts"));
        }
        AnnotationValue scope = idempotent.value("scope");

        if (errors.size() == errorsBefore) {
            methods.add(new IdempotentMethodsBuildItem.Entry(method,
                    new IdempotentMethodInfo(method.declaringClass().name() + "#" + method.name(), channels,
                            scope == null ? "" : scope.asString().trim(), keyFunction, mode, retention, lease,
                            maxAttempts, returns, messageParameter, processor, transactional)));
        }
    }

    /**
     * The method's mode: {@code AUTO} stays {@code AUTO} (the store decides at startup) for a method that can write its
     * key in its transaction, and becomes {@code LEASE} for every other; a forced {@code IN_TRANSACTION} that cannot
     * work is an error.
     */
    private IdempotencyMode mode(AnnotationInstance idempotent, MethodInfo method, boolean transactional,
            Returns returns, boolean messageParameter, boolean processor, String where) {
        AnnotationValue value = idempotent.value("mode");
        IdempotencyMode requested = value == null ? IdempotencyMode.AUTO : IdempotencyMode.valueOf(value.asEnum());
        boolean eligible = transactional && startsTransaction(method) && returns == Returns.SYNC && !messageParameter
                && !processor;
        if (requested == IdempotencyMode.IN_TRANSACTION && !eligible) {
            errors.add(new UnsupportedSignatureException(
                    "@Idempotent(mode = IN_TRANSACTION) needs a @Transactional method that starts its transaction,"
                            + " takes the payload, returns synchronously and emits nothing",
                    where, "add @Transactional (REQUIRED or REQUIRES_NEW), or use mode = LEASE"));
        }
        if (requested == IdempotencyMode.IN_TRANSACTION && memoryStore) {
            errors.add(new StoreConfigurationException(
                    "@Idempotent(mode = IN_TRANSACTION) needs a store that writes keys in the method's transaction,"
                            + " but quarkus.idempotency.store=memory",
                    where, "use the database store, or mode = LEASE"));
        }
        return requested == IdempotencyMode.AUTO && !eligible ? IdempotencyMode.LEASE : requested;
    }

    // A Message, or a connector's own message type (IncomingRabbitMQMessage, ...).
    private boolean isMessage(Type type) {
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

    private String keyFunction(AnnotationInstance idempotent, MethodInfo method, boolean messageParameter,
            String where) {
        AnnotationValue value = idempotent.value("key");
        DotName keyClass = value == null ? MESSAGE_ID_KEY : value.asClass().name();
        if (keyClass.equals(MESSAGE_ID_KEY)) {
            return keyClass.toString();
        }
        ClassInfo info = index.getClassByName(keyClass);
        if (info == null) {
            errors.add(new KeyFunctionException("@Idempotent key function " + keyClass + " is not in the index", where,
                    "make it a class of the application (or index its jar)"));
            return null;
        }
        if (Modifier.isAbstract(info.flags()) || info.isInterface()) {
            errors.add(new KeyFunctionException("@Idempotent key function " + keyClass + " is abstract", where,
                    "name a concrete class implementing KeyFunction"));
            return null;
        }
        Type accepted = acceptedPayload(info);
        Type payload = messageParameter ? messagePayload(method.parameterType(0)) : method.parameterType(0);
        if (accepted != null && payload != null && !assignable(payload, accepted)) {
            errors.add(new KeyFunctionException("@Idempotent key function " + keyClass + " accepts " + accepted.name()
                    + " but the method's payload is " + payload.name(), where,
                    "implement KeyFunction<" + payload.name().withoutPackagePrefix() + "> or a supertype of it"));
        }
        return keyClass.toString();
    }

    // The T of KeyFunction<T> as the class (or a superclass) declares it; null when it cannot be told.
    private Type acceptedPayload(ClassInfo info) {
        for (ClassInfo c = info; c != null;) {
            for (Type iface : c.interfaceTypes()) {
                if (iface.name().equals(KEY_FUNCTION)) {
                    if (iface.kind() == Type.Kind.PARAMETERIZED_TYPE) {
                        Type arg = iface.asParameterizedType().arguments().get(0);
                        return arg.kind() == Type.Kind.CLASS || arg.kind() == Type.Kind.PARAMETERIZED_TYPE ? arg
                                : null;
                    }
                    return null;
                }
            }
            DotName superName = c.superName();
            c = superName == null ? null : index.getClassByName(superName);
        }
        errors.add(new KeyFunctionException("@Idempotent key function " + info.name() + " does not implement"
                + " KeyFunction", "class=" + info.name(), "implement io.quarkiverse.idempotency.KeyFunction"));
        return null;
    }

    private static Type messagePayload(Type message) {
        if (message.kind() == Type.Kind.PARAMETERIZED_TYPE) {
            ParameterizedType p = message.asParameterizedType();
            Type arg = p.arguments().get(0);
            return arg.kind() == Type.Kind.CLASS || arg.kind() == Type.Kind.PARAMETERIZED_TYPE ? arg : null;
        }
        return null;
    }

    private static boolean assignable(Type payload, Type accepted) {
        if (accepted.name().equals(payload.name()) || accepted.name().equals(DotName.OBJECT_NAME)) {
            return true;
        }
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        try {
            Class<?> target = Class.forName(accepted.name().toString(), false, loader);
            Class<?> source = Class.forName(payload.name().toString(), false, loader);
            return target.isAssignableFrom(source);
        } catch (ClassNotFoundException | LinkageError e) {
            return true; // cannot tell: let the runtime cast decide
        }
    }

    private String duration(AnnotationInstance idempotent, String member, String where) {
        AnnotationValue value = idempotent.value(member);
        String text = value == null ? "" : value.asString().trim();
        if (text.isEmpty()) {
            return "";
        }
        if (text.contains("${")) {
            return text; // a configuration expression: resolved, and checked, at startup
        }
        try {
            if (DurationConverter.parseDuration(text).isNegative()) {
                throw new IllegalArgumentException("negative");
            }
            if (DurationConverter.parseDuration(text).isZero()) {
                throw new IllegalArgumentException("zero");
            }
        } catch (RuntimeException e) {
            errors.add(new InvalidDurationException("@Idempotent(" + member + " = \"" + text + "\") is not a positive"
                    + " duration", where, "use an ISO-8601 duration (PT30M) or a Quarkus shorthand (30m, 24h, 7d)"));
            return "";
        }
        return text;
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

    private static String describe(AnnotationInstance annotation) {
        AnnotationTarget target = annotation.target();
        if (target.kind() == AnnotationTarget.Kind.METHOD) {
            MethodInfo m = target.asMethod();
            return m.declaringClass().name() + "#" + m.name() + m.parameterTypes();
        }
        return target.toString();
    }
}
