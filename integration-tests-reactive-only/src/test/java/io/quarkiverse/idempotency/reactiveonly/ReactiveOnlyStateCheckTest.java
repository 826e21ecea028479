package io.quarkiverse.idempotency.reactiveonly;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.runtime.database.TableStatements;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A keys' table as version 1.1 made it, with a check constraint listing the states on its state column, in an
 * application with only the reactive client: {@code schema-management=update} drops the constraint through the
 * client (PostgreSQL prepared it again for every write of a key), and keeps the table and its keys.
 */
class ReactiveOnlyStateCheckTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = ReactiveOnlyServices.configure(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(ReactiveOnlyServices.class,
                    Ledger.class)))
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            // one table: an empty one would otherwise be made again partitioned
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "none");

    static {
        String flag = "idempotency.test.state-check." + ReactiveOnlyStateCheckTest.class.getName();
        if (System.getProperty(flag) == null) {
            System.setProperty(flag, "done");
            List<String> statements = new ArrayList<>(List.of("DROP TABLE IF EXISTS idempotency_record CASCADE"));
            statements.addAll(TableStatements.schema("idempotency_record"));
            statements.add("ALTER TABLE idempotency_record DROP CONSTRAINT IF EXISTS idempotency_record_state_check,"
                    + " ADD CONSTRAINT idempotency_record_state_check CHECK (state IN ('CLAIMED', 'CONFIRMED', 'FAILED',"
                    + " 'DEAD_LETTERED'))");
            statements.add("INSERT INTO idempotency_record (scoped_key, scope, state, recorded_at, expires_at) VALUES"
                    + " ('s:handled-before', 's', 'CONFIRMED', now(), now() + interval '1 day')");
            statements.forEach(Ledger::update);
        }
    }

    @Test
    void theConstraintIsDroppedAndTheKeysKept() {
        assertEquals(0, Ledger.count("SELECT count(*) FROM pg_constraint WHERE conrelid = 'idempotency_record'::regclass"
                + " AND contype = 'c'"));
        assertEquals("r 1", Ledger.text("SELECT relkind::text || ' ' || (SELECT count(*) FROM idempotency_record"
                + " WHERE scoped_key = 's:handled-before') FROM pg_class WHERE oid = 'idempotency_record'::regclass"));
    }
}
