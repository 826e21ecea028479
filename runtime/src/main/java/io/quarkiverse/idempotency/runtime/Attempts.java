package io.quarkiverse.idempotency.runtime;

import java.util.concurrent.CompletionStage;

import jakarta.interceptor.InvocationContext;

import io.smallrye.mutiny.Uni;

/** An attempt of an {@code @Idempotent} method, as the interceptors see it: what it returns, as a {@code Uni}. */
final class Attempts {

    private Attempts() {
    }

    /** @return what the method (or the next interceptor) returns, as a {@code Uni}; a throw as its failure */
    static Uni<Object> attempt(InvocationContext ic) {
        try {
            return toUni(ic.proceed());
        } catch (Throwable t) {
            return Uni.createFrom().failure(t);
        }
    }

    /** @return a method's result as a {@code Uni}: a {@code Uni} as it is, a stage when it completes, else at once */
    @SuppressWarnings("unchecked")
    static Uni<Object> toUni(Object returned) {
        if (returned instanceof Uni<?> uni) {
            return (Uni<Object>) uni;
        }
        if (returned instanceof CompletionStage<?> stage) {
            return Uni.createFrom().completionStage((CompletionStage<Object>) stage);
        }
        return Uni.createFrom().item(returned);
    }
}
