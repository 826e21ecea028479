package io.quarkiverse.idempotency.runtime;

/**
 * A failure as the store recorded it ({@code <exception class>: <message>}), for a key dead-lettered earlier: the cause
 * of its message being dead-lettered again, so that the dead letter carries the original reason.
 */
final class RecordedFailure extends RuntimeException {

    private final String recorded;

    RecordedFailure(String recorded) {
        super(recorded, null, false, false);
        this.recorded = recorded == null ? "unknown (not recorded)" : recorded;
    }

    /** @return the exception class of the recorded failure, as far as the record tells */
    String exceptionClass() {
        int colon = recorded.indexOf(':');
        String head = colon < 0 ? recorded : recorded.substring(0, colon);
        return head.matches("[\\w.$]+") ? head : RecordedFailure.class.getName();
    }

    @Override
    public String toString() {
        return recorded;
    }
}
