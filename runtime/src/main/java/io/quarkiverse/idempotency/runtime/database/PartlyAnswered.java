package io.quarkiverse.idempotency.runtime.database;

import java.util.List;

/**
 * A batch whose statement committed but some of whose requests could not be answered (a look-up after the commit
 * failed): each request gets its own answer or its own failure, so that what the batch claimed for the others reaches
 * them rather than staying claimed with no holder. Thrown (or failed with) by a batch of {@link GroupCommit} or
 * {@link AsyncGroupCommit}, which hand out the answers one by one.
 */
final class PartlyAnswered extends RuntimeException {

    private final transient List<Object> answers;

    /** @param answers per request, in order: its answer, or the {@link RuntimeException} that failed it */
    PartlyAnswered(List<Object> answers, RuntimeException first) {
        super("Part of a batch could not be answered: " + first.getMessage(), first, false, false);
        this.answers = answers;
    }

    /**
     * @return the answer of request {@code i}
     * @throws RuntimeException what failed it
     */
    @SuppressWarnings("unchecked")
    <A> A answer(int i) {
        Object answer = answers.get(i);
        if (answer instanceof RuntimeException failure) {
            throw failure;
        }
        return (A) answer;
    }
}
