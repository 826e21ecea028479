package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.IdempotencyRecord;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The table Hibernate ORM generates from the entity (its schema generation at startup, as tests and dev mode often
 * have it) gets a check constraint listing the state enum's names; the store's schema update drops it, as PostgreSQL
 * prepares it again for every write of a key, and the entity still reads and counts states.
 */
class HibernateTableStateTest {

    /** Where Hibernate ORM writes the statements it creates the table with: the constraint it makes is asserted there. */
    static final Path CREATE_SCRIPT = Path.of("target", "hibernate-table-state-create.sql").toAbsolutePath();

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.scripts.generation", "create")
            .overrideConfigKey("quarkus.hibernate-orm.scripts.generation.create-target", CREATE_SCRIPT.toString())
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "none")
            .setLogRecordPredicate(r -> r.getMessage() != null && r.getMessage().contains("IDEMP3011"))
            .assertLogRecords(records -> assertEquals(List.of(), records));

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void noStateCheckAndStatesReadByName() throws SQLException, IOException {
        String created = Files.readString(CREATE_SCRIPT).toLowerCase(Locale.ROOT);
        assertTrue(created.matches("(?s).*check \\(+state in \\('claimed'.*"), "Hibernate ORM made the constraint: "
                + created);
        assertEquals("0", SchemaSql.stateChecks(new Sql(dataSource), IdempotencyRecord.DEFAULT_TABLE));
        ScopedKey key = new ScopedKey("s", "k");
        assertEquals(ClaimResult.NEW, store.claim(key, "t#1", Duration.ofSeconds(30), Duration.ofHours(1)).result());
        assertTrue(store.confirm(key, "t#1", Duration.ofHours(1)));
        assertEquals(IdempotencyRecord.State.CONFIRMED, QuarkusTransaction.requiringNew()
                .call(() -> IdempotencyRecord.<IdempotencyRecord> findById("s:k").state));
        assertEquals(1, QuarkusTransaction.requiringNew()
                .call(() -> IdempotencyRecord.countByState(IdempotencyRecord.State.CONFIRMED)));
    }
}
