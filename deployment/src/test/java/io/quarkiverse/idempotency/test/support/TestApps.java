package io.quarkiverse.idempotency.test.support;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;

import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Builds the test applications: in-memory connector channels on their own Vert.x contexts, the in-memory store or the
 * database store on the tests' PostgreSQL ({@link TestServices}). Dev Services are off: an application that needs a
 * server is given the tests' one, the others need none.
 */
public final class TestApps {

    private TestApps() {
    }

    /**
     * @param incoming the incoming channels, each wired to the in-memory connector
     * @param outgoing the outgoing channels, each wired to the in-memory connector
     * @param classes the application classes
     */
    public static QuarkusUnitTest inMemory(String[] incoming, String[] outgoing, Class<?>... classes) {
        QuarkusUnitTest test = new QuarkusUnitTest()
                .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(classes)
                        .addClasses(Delivered.class, TestApps.class))
                .overrideConfigKey("quarkus.devservices.enabled", "false")
                .overrideConfigKey("quarkus.idempotency.store", "memory")
                .overrideConfigKey("quarkus.idempotency.requeue-delay", "0s")
                .overrideConfigKey("quarkus.datasource.active", "false")
                .overrideConfigKey("quarkus.hibernate-orm.active", "false");
        for (String channel : incoming) {
            test.overrideConfigKey("mp.messaging.incoming." + channel + ".connector", "smallrye-in-memory")
                    .overrideConfigKey("mp.messaging.incoming." + channel + ".run-on-vertx-context", "true");
        }
        for (String channel : outgoing) {
            test.overrideConfigKey("mp.messaging.outgoing." + channel + ".connector", "smallrye-in-memory");
        }
        return test;
    }

    /**
     * The JDBC URL of the test database: the database postgres (the demo application uses test) on the tests'
     * PostgreSQL, the one {@code TEST_POSTGRES} names or a container (see {@link TestServices}).
     */
    public static String jdbcUrl() {
        return TestServices.postgres().jdbcUrl("postgres");
    }

    /** The user of the test database. */
    public static String jdbcUser() {
        return TestServices.postgres().user();
    }

    /** The password of the test database's user. */
    public static String jdbcPassword() {
        return TestServices.postgres().password();
    }

    /**
     * An application on the in-memory connector with the database store on the real PostgreSQL, its schema created
     * by Hibernate ORM.
     */
    public static QuarkusUnitTest postgres(String[] incoming, Class<?>... classes) {
        QuarkusUnitTest test = new QuarkusUnitTest()
                .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(classes)
                        .addClasses(Delivered.class, TestApps.class, Sql.class))
                .overrideConfigKey("quarkus.devservices.enabled", "false")
                .overrideConfigKey("quarkus.idempotency.store", "database")
                .overrideConfigKey("quarkus.idempotency.requeue-delay", "0s")
                .overrideConfigKey("quarkus.datasource.db-kind", "postgresql")
                .overrideConfigKey("quarkus.datasource.username", jdbcUser())
                .overrideConfigKey("quarkus.datasource.password", jdbcPassword())
                .overrideConfigKey("quarkus.datasource.jdbc.url", jdbcUrl())
                .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "drop-and-create");
        for (String channel : incoming) {
            test.overrideConfigKey("mp.messaging.incoming." + channel + ".connector", "smallrye-in-memory")
                    .overrideConfigKey("mp.messaging.incoming." + channel + ".run-on-vertx-context", "true");
        }
        return test;
    }

    /**
     * An application on the in-memory store whose build must fail by breaking {@code rule}, with a message containing
     * {@code messagePart}.
     */
    public static QuarkusUnitTest failing(Rule rule, String messagePart, Class<?>... classes) {
        return failing(t -> assertBroken(t, rule, messagePart), classes);
    }

    /**
     * Asserts that a failed build reports {@code rule} broken, with a message containing {@code messagePart}.
     */
    public static void assertBroken(Throwable t, Rule rule, String messagePart) {
        List<IdempotencyDefinitionException> found = new ArrayList<>();
        collect(t, found);
        for (IdempotencyDefinitionException e : found) {
            if (e.rule() == rule && e.getMessage().contains(messagePart)) {
                return;
            }
        }
        throw new AssertionError("Expected rule " + rule + " broken with a message containing '" + messagePart
                + "', but the build reported " + found.stream().map(e -> e.rule() + ": " + e.getMessage()).toList(),
                t);
    }

    /** @return the rules a failed build reports broken */
    public static List<Rule> rulesBroken(Throwable t) {
        List<IdempotencyDefinitionException> found = new ArrayList<>();
        collect(t, found);
        return found.stream().map(IdempotencyDefinitionException::rule).toList();
    }

    private static void collect(Throwable t, List<IdempotencyDefinitionException> found) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof IdempotencyDefinitionException e && !found.contains(e)) {
                found.add(e);
            }
            for (Throwable s : c.getSuppressed()) {
                collect(s, found);
            }
        }
    }

    /**
     * An application on the in-memory store whose build or startup must fail, as {@code assertion} checks.
     */
    public static QuarkusUnitTest failing(Consumer<Throwable> assertion, Class<?>... classes) {
        return new QuarkusUnitTest()
                .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(classes).addClass(TestApps.class))
                .overrideConfigKey("quarkus.devservices.enabled", "false")
                .overrideConfigKey("quarkus.idempotency.store", "memory")
                .overrideConfigKey("quarkus.datasource.active", "false")
                .overrideConfigKey("quarkus.hibernate-orm.active", "false")
                .assertException(assertion);
    }

    /** @return every message of {@code t}, its causes and what they suppressed, one per line */
    public static String messages(Throwable t) {
        StringBuilder all = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            all.append(c.getMessage()).append('\n');
            for (Throwable s : c.getSuppressed()) {
                all.append(messages(s));
            }
        }
        return all.toString();
    }
}
