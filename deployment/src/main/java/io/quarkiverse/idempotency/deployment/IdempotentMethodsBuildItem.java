package io.quarkiverse.idempotency.deployment;

import java.util.List;

import org.jboss.jandex.MethodInfo;

import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.runtime.IdempotentMethodInfo;
import io.quarkus.builder.item.SimpleBuildItem;

/**
 * Every {@code @Idempotent} method of the application, analysed, and the definition errors found on the way. Produced
 * by {@link IdempotencyProcessor#analyse}; consumed by the annotation transformer, the validation steps, the recorder
 * step and each connector's processor (its channel defaults and checks).
 */
public final class IdempotentMethodsBuildItem extends SimpleBuildItem {

    /**
     * One valid method.
     *
     * @param method the Jandex method
     * @param info what is recorded for runtime
     */
    public record Entry(MethodInfo method, IdempotentMethodInfo info) {
    }

    private final List<Entry> methods;
    private final List<MethodInfo> invalidMethods;
    private final List<IdempotencyDefinitionException> errors;

    public IdempotentMethodsBuildItem(List<Entry> methods, List<MethodInfo> invalidMethods,
            List<IdempotencyDefinitionException> errors) {
        this.methods = List.copyOf(methods);
        this.invalidMethods = List.copyOf(invalidMethods);
        this.errors = List.copyOf(errors);
    }

    /** @return the annotated methods that broke a rule; the build fails, reporting {@link #errors()} */
    public List<MethodInfo> invalidMethods() {
        return invalidMethods;
    }

    /** @return the valid methods, in a stable order: a method's position is its {@code IdempotentMethodIndex} */
    public List<Entry> methods() {
        return methods;
    }

    /** @return the definition errors */
    public List<IdempotencyDefinitionException> errors() {
        return errors;
    }
}
