package io.quarkiverse.idempotency.deployment;

import static io.quarkiverse.idempotency.deployment.IdempotencyDotNames.*;

import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationTarget;
import org.jboss.jandex.ClassInfo;
import org.jboss.jandex.DotName;
import org.jboss.jandex.IndexView;
import org.jboss.jandex.MethodInfo;
import org.jboss.jandex.ParameterizedType;
import org.jboss.jandex.Type;

import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.runtime.IdempotentMethodInfo;

/**
 * Reads every {@code @Idempotent} in the index into {@link MethodFacts}, checks them against the {@link MethodRules}
 * and the key function's rules, and describes the valid methods.
 */
final class IdempotentMethodAnalyzer {

    private final IndexView index;
    private final boolean memoryStore;
    private final boolean keysWithoutBlocking;

    /**
     * @param memoryStore whether the memory store is the selected store (it cannot write keys in a transaction)
     * @param keysWithoutBlocking whether the selected store's lease-mode calls can be made without blocking (the memory
     *        store; the database store with the reactive PostgreSQL client), so that a method may run on the event loop
     */
    IdempotentMethodAnalyzer(IndexView index, boolean memoryStore, boolean keysWithoutBlocking) {
        this.index = index;
        this.memoryStore = memoryStore;
        this.keysWithoutBlocking = keysWithoutBlocking;
    }

    IdempotentMethodsBuildItem analyse() {
        List<IdempotentMethodsBuildItem.Entry> methods = new ArrayList<>();
        List<MethodInfo> invalidMethods = new ArrayList<>();
        List<IdempotencyDefinitionException> errors = new ArrayList<>();
        List<AnnotationInstance> annotations = new ArrayList<>(index.getAnnotations(IDEMPOTENT));
        annotations.sort(Comparator.comparing(a -> a.target().toString()));
        for (AnnotationInstance annotation : annotations) {
            if (annotation.target().kind() == AnnotationTarget.Kind.CLASS) {
                ClassInfo type = annotation.target().asClass();
                if (!type.isAnnotation() && !type.name().toString().startsWith("io.quarkiverse.idempotency.runtime.")) {
                    errors.add(new IdempotencyDefinitionException(Rule.ON_CLASS, "class=" + type.name()));
                }
            } else if (annotation.target().kind() == AnnotationTarget.Kind.METHOD) {
                MethodFacts facts = MethodFacts.read(annotation.target().asMethod(), annotation);
                List<IdempotencyDefinitionException> broken = new ArrayList<>(MethodRules.check(facts));
                if (!facts.channels().isEmpty() && !facts.takesNothing() && !facts.stream()) {
                    MethodRules.checkInTransactionStore(facts, memoryStore).ifPresent(broken::add);
                    MethodRules.checkEventLoopStore(facts, keysWithoutBlocking).ifPresent(broken::add);
                    checkKeyFunction(facts).ifPresent(broken::add);
                }
                if (broken.isEmpty()) {
                    methods.add(new IdempotentMethodsBuildItem.Entry(facts.method(), describe(facts)));
                } else {
                    invalidMethods.add(facts.method());
                    errors.addAll(broken);
                }
            }
        }
        return new IdempotentMethodsBuildItem(methods, invalidMethods, errors);
    }

    private static IdempotentMethodInfo describe(MethodFacts facts) {
        return new IdempotentMethodInfo(facts.description(), facts.channels(), facts.scope(),
                facts.keyFunction().toString(), mode(facts), facts.retention(), facts.lease(), facts.maxAttempts(),
                facts.returns(), facts.messageParameter(), facts.processor(), facts.transactional(),
                facts.reactiveUnit(), facts.reactiveStateless(), facts.onEventLoop(),
                facts.throughOutbox() ? facts.outgoing() : "");
    }

    /**
     * The method's mode: {@code AUTO} stays {@code AUTO} (the store decides at startup) for a method that can write its
     * key in its transaction, and becomes {@code LEASE} for every other.
     */
    private static IdempotencyMode mode(MethodFacts facts) {
        return facts.mode() == IdempotencyMode.AUTO && !facts.canWriteKeyInTransaction() ? IdempotencyMode.LEASE
                : facts.mode();
    }

    private Optional<IdempotencyDefinitionException> checkKeyFunction(MethodFacts facts) {
        DotName keyClass = facts.keyFunction();
        if (keyClass.equals(MESSAGE_ID_KEY)) {
            return Optional.empty();
        }
        ClassInfo info = index.getClassByName(keyClass);
        if (info == null) {
            return broken(Rule.KEY_FUNCTION_NOT_INDEXED, facts, keyClass);
        }
        if (Modifier.isAbstract(info.flags()) || info.isInterface()) {
            return broken(Rule.KEY_FUNCTION_ABSTRACT, facts, keyClass);
        }
        Optional<Type> accepted = acceptedPayload(info);
        if (accepted == null) {
            return Optional.of(new IdempotencyDefinitionException(Rule.KEY_FUNCTION_NOT_A_KEY_FUNCTION,
                    "class=" + info.name(), info.name()));
        }
        MethodInfo method = facts.method();
        Type payload = facts.messageParameter() ? messagePayload(method.parameterType(0)) : method.parameterType(0);
        if (accepted.isPresent() && payload != null && !assignable(payload, accepted.get())) {
            return broken(Rule.KEY_FUNCTION_PAYLOAD, facts, keyClass, accepted.get().name(), payload.name(),
                    payload.name().withoutPackagePrefix());
        }
        return Optional.empty();
    }

    // The T of KeyFunction<T> as the class (or a superclass) declares it; empty when it cannot be told; null when the
    // class does not implement KeyFunction.
    private Optional<Type> acceptedPayload(ClassInfo info) {
        for (ClassInfo c = info; c != null;) {
            for (Type iface : c.interfaceTypes()) {
                if (iface.name().equals(KEY_FUNCTION)) {
                    if (iface.kind() == Type.Kind.PARAMETERIZED_TYPE) {
                        Type arg = iface.asParameterizedType().arguments().get(0);
                        return arg.kind() == Type.Kind.CLASS || arg.kind() == Type.Kind.PARAMETERIZED_TYPE
                                ? Optional.of(arg)
                                : Optional.empty();
                    }
                    return Optional.empty();
                }
            }
            DotName superName = c.superName();
            c = superName == null ? null : index.getClassByName(superName);
        }
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

    private static Optional<IdempotencyDefinitionException> broken(Rule rule, MethodFacts facts, Object... details) {
        return Optional.of(new IdempotencyDefinitionException(rule, facts.method(), details));
    }
}
