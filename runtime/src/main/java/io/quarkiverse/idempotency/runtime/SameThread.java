package io.quarkiverse.idempotency.runtime;

import org.eclipse.microprofile.context.ThreadContext;

import io.smallrye.context.CleanAutoCloseable;
import io.smallrye.context.SmallRyeThreadContext;

/**
 * Runs Mutiny work that is answered on the calling thread before it returns (the JDBC store's statements), without
 * capturing the thread's contexts for its operators. With SmallRye Context Propagation, which every Quarkus
 * application with Mutiny has, each Mutiny operator captures the thread's contexts (the JTA transaction, the CDI request
 * context, ...) when it is assembled and sets them around each of its callbacks: work whose callbacks all run on this
 * thread, within this call, runs in those contexts anyway, so that is a capture and two switches per operator per
 * message for nothing. Here the work is assembled and run with a thread context that propagates and clears nothing,
 * whose operators are left as they are.
 * <p>
 * Only for work that completes before the call returns: a callback run later, or on another thread, would run in
 * whatever contexts that thread has.
 */
public final class SameThread {

    /**
     * Built at run time, on first use, for the application's class loader (the context manager is there once the
     * application started; in dev mode a reloaded application has a context manager of its own).
     */
    private static volatile Built none;

    private record Built(ClassLoader loader, SmallRyeThreadContext context) {
    }

    private SameThread() {
    }

    /** Work that may throw one kind of checked exception, which {@link #run} passes on as it is. */
    @FunctionalInterface
    public interface Work<T, E extends Exception> {
        T call() throws E;
    }

    /** @return the outcome of {@code work}, run with no context captured by the Mutiny operators it assembles */
    public static <T, E extends Exception> T run(Work<T, E> work) throws E {
        try (CleanAutoCloseable ignored = SmallRyeThreadContext.withThreadContext(none())) {
            return work.call();
        }
    }

    private static SmallRyeThreadContext none() {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        Built built = none;
        if (built == null || built.loader() != loader) {
            built = new Built(loader, (SmallRyeThreadContext) ThreadContext.builder().propagated().cleared()
                    .unchanged(ThreadContext.ALL_REMAINING).build());
            none = built;
        }
        return built.context();
    }
}
