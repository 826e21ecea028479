package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.fail;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code partitioning=time} with {@code schema-management=update} on a table another table's foreign key references:
 * the move would fail at its swap, after building an index and validating a constraint beside the consumers, at every
 * start. Startup refuses it at once, naming the reason and the remedies, and the table keeps its layout and keys.
 */
class PartitionMigrationRefusedTest {

    static {
        SchemaSql.beforeStart(PartitionMigrationRefusedTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS refused_refs", "DROP TABLE IF EXISTS refused_keys CASCADE");
            SchemaSql.firstVersion("refused_keys");
            SchemaSql.run("CREATE TABLE refused_refs (scoped_key VARCHAR(255) REFERENCES refused_keys (scoped_key))");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = SchemaSql.movingAtStartup("refused_keys", new String[0])
            .assertException(t -> {
                for (Throwable c = t; c != null; c = c.getCause()) {
                    String m = c.getMessage();
                    if (m != null && m.contains("The idempotency table 'refused_keys' cannot be moved to partitions")) {
                        for (String part : new String[] { "other objects depend on it", "Its layout was not changed",
                                "partitioning=none" }) {
                            if (!m.contains(part)) {
                                throw new AssertionError("the message must name the reason and the remedies (" + part
                                        + "): " + m, t);
                            }
                        }
                        assertUntouched();
                        return;
                    }
                }
                throw new AssertionError("expected the refused move", t);
            });

    // unpartitioned, its key there, neither the move's index nor its bound constraint added (the schema update ran)
    private static void assertUntouched() {
        try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), TestApps.jdbcPassword());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT (SELECT relkind::text FROM pg_class WHERE oid ="
                        + " 'refused_keys'::regclass) || ' ' || (SELECT count(*) FROM refused_keys) || ' '"
                        + " || (to_regclass('refused_keys_key_expiry') IS NULL) || ' ' || (SELECT count(*) FROM"
                        + " pg_constraint WHERE conname = 'refused_keys_legacy_bound')")) {
            rs.next();
            if (!"r 1 true 0".equals(rs.getString(1))) {
                throw new AssertionError("the table must be left as it was (layout, keys, no index, no bound): "
                        + rs.getString(1));
            }
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void startupFails() {
        fail("startup must fail");
    }
}
