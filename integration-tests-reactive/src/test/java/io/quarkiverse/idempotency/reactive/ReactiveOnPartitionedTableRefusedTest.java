package io.quarkiverse.idempotency.reactive;

import static org.junit.jupiter.api.Assertions.fail;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkus.test.QuarkusUnitTest;

/**
 * A table partitioned by time is a setting the reactive claim does not support yet: the application with a
 * {@code @WithTransaction} consumer does not start, and says why, rather than retrying its messages forever.
 */
class ReactiveOnPartitionedTableRefusedTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = ReactiveApps.withServices(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(ReactivePaymentConsumer.class,
                    ReactiveCharge.class, OrderIdKey.class, Attempts.class))
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "time")
            // a table of its own, which the extension creates (not Flyway, whose history the other tests share): the
            // one the other tests use stays unpartitioned
            .overrideConfigKey("quarkus.idempotency.database.table", "partitioned_keys")
            .overrideConfigKey("quarkus.flyway.migrate-at-start", "false")
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    if (String.valueOf(c.getMessage()).contains("ReactivePaymentConsumer#charge runs in a Hibernate"
                            + " Reactive transaction (@WithTransaction) on its event loop, but its key cannot be written"
                            + " in that transaction: quarkus.idempotency.database.partitioning is time")) {
                        return;
                    }
                }
                throw new AssertionError("expected the refusal of the partitioned table", t);
            }));

    @Test
    void startupFails() {
        fail("the application must not start");
    }
}
