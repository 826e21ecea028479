package io.quarkiverse.idempotency.reactive;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkus.test.QuarkusUnitTest;

/**
 * The reactive consumers' scenarios ({@link ReactivePaymentScenarios}) on a key table partitioned by time: a Hibernate
 * Reactive consumer's key written in its session's transaction, and the event-loop consumers' lease-mode claims,
 * batches and failure counts through the reactive client, with the partitioned table's statements (its functions
 * taking the key's lock); the partitions managed over JDBC by the store. The reactive channels keep their keys 30
 * days, longer than the partitions made at startup reach (the configured retention's): their first writes have the
 * partitions created on a worker thread, never on the event loop, and resume on their context.
 */
class ReactivePaymentsOnPartitionsTest extends ReactivePaymentScenarios {

    @RegisterExtension
    static final QuarkusUnitTest APP = app("reactive_partitioned_test")
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "time")
            .overrideConfigKey("quarkus.idempotency.channels.\"reactive-payments\".retention", "30d")
            .overrideConfigKey("quarkus.idempotency.channels.\"lease-payments\".retention", "30d");
}
