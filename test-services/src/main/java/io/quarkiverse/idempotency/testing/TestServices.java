package io.quarkiverse.idempotency.testing;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.rabbitmq.RabbitMQContainer;

/**
 * The PostgreSQL, RabbitMQ and Kafka the test suites run against.
 * <p>
 * Where {@code TEST_POSTGRES}, {@code TEST_RABBITMQ} and {@code TEST_KAFKA} ({@code host:port}, as environment
 * variables or system properties {@code test.postgres}, {@code test.rabbitmq} and {@code test.kafka}) name running
 * servers, those are used (Kafka without authentication): PostgreSQL with
 * user {@code postgres} and no password (or {@code TEST_POSTGRES_USER}, {@code TEST_POSTGRES_PASSWORD}), RabbitMQ with
 * {@code guest}/{@code guest} (or {@code TEST_RABBITMQ_USER}, {@code TEST_RABBITMQ_PASSWORD}). This project's CI sets
 * them ({@code .ci/run}). Otherwise each server is started once per test JVM as a container with Testcontainers, as
 * Quarkus's Dev Services would start it, which needs Docker (or Podman) and nothing else.
 * <p>
 * The suites use the databases {@link #DATABASES}, created in a container on its start.
 */
public final class TestServices {

    /** The databases the suites use: the extension's tests, the demo's, the benchmark's. */
    public static final List<String> DATABASES = List.of("postgres", "test", "root");

    private static Server postgres;
    private static Server rabbitmq;
    private static Server kafka;

    private TestServices() {
    }

    /** A server the tests reach. */
    public record Server(String host, int port, String user, String password) {

        /** @return the JDBC URL of a database on this PostgreSQL */
        public String jdbcUrl(String database) {
            return "jdbc:postgresql://" + host + ":" + port + "/" + database;
        }
    }

    /** @return the PostgreSQL of the tests, started on first use when none is configured */
    public static synchronized Server postgres() {
        if (postgres == null) {
            String configured = setting("test.postgres", "TEST_POSTGRES");
            postgres = configured != null
                    ? server(configured, 5432, setting("test.postgres.user", "TEST_POSTGRES_USER", "postgres"),
                            setting("test.postgres.password", "TEST_POSTGRES_PASSWORD", ""))
                    : startPostgres();
        }
        return postgres;
    }

    /**
     * Creates a database afresh on the tests' PostgreSQL, once per test JVM: a system property remembers it, since each
     * application a test builds loads its own copy of the test's classes while the JVM has one set of properties.
     *
     * @return the PostgreSQL it is on
     */
    public static synchronized Server freshDatabase(String name) {
        Server db = postgres();
        String created = "idempotency.tests.database-created." + name;
        if (System.getProperty(created) == null) {
            System.setProperty(created, "true");
            try (Connection c = DriverManager.getConnection(db.jdbcUrl("postgres"), db.user(), db.password());
                    Statement statement = c.createStatement()) {
                statement.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
                statement.execute("CREATE DATABASE " + name);
            } catch (SQLException e) {
                throw new IllegalStateException("Could not create the database " + name, e);
            }
        }
        return db;
    }

    /** @return an application's settings that reach the tests' RabbitMQ ({@code rabbitmq-host} and the like) */
    public static Map<String, String> rabbitmqSettings() {
        Server broker = rabbitmq();
        return Map.of("rabbitmq-host", broker.host(),
                "rabbitmq-port", String.valueOf(broker.port()),
                "rabbitmq-username", broker.user(),
                "rabbitmq-password", broker.password());
    }

    /** @return the RabbitMQ of the tests, started on first use when none is configured */
    public static synchronized Server rabbitmq() {
        if (rabbitmq == null) {
            String configured = setting("test.rabbitmq", "TEST_RABBITMQ");
            rabbitmq = configured != null
                    ? server(configured, 5672, setting("test.rabbitmq.user", "TEST_RABBITMQ_USER", "guest"),
                            setting("test.rabbitmq.password", "TEST_RABBITMQ_PASSWORD", "guest"))
                    : startRabbitMQ();
        }
        return rabbitmq;
    }

    /** @return the Kafka broker of the tests ({@link Server#host()}:{@link Server#port()} is its bootstrap server) */
    public static synchronized Server kafka() {
        if (kafka == null) {
            String configured = setting("test.kafka", "TEST_KAFKA");
            kafka = configured != null ? server(configured, 9092, "", "") : startKafka();
        }
        return kafka;
    }

    @SuppressWarnings("resource")
    private static Server startKafka() {
        KafkaContainer container = new KafkaContainer("apache/kafka:4.1.1");
        container.start();
        String bootstrap = container.getBootstrapServers();
        return server(bootstrap.substring(bootstrap.lastIndexOf('/') + 1), 9092, "", "");
    }

    @SuppressWarnings("resource") // stopped by Testcontainers when the JVM exits
    private static Server startPostgres() {
        PostgreSQLContainer container = new PostgreSQLContainer("postgres:17").withDatabaseName("postgres")
                .withUsername("postgres").withPassword("postgres");
        container.start();
        Server server = new Server(container.getHost(), container.getMappedPort(5432), "postgres", "postgres");
        try (Connection c = DriverManager.getConnection(server.jdbcUrl("postgres"), server.user(), server.password());
                Statement s = c.createStatement()) {
            for (String database : DATABASES.subList(1, DATABASES.size())) {
                s.execute("CREATE DATABASE " + database);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("Could not create the test databases in the PostgreSQL container", e);
        }
        return server;
    }

    @SuppressWarnings("resource")
    private static Server startRabbitMQ() {
        RabbitMQContainer container = new RabbitMQContainer("rabbitmq:4-management");
        container.start();
        return new Server(container.getHost(), container.getAmqpPort(), container.getAdminUsername(),
                container.getAdminPassword());
    }

    private static Server server(String hostPort, int defaultPort, String user, String password) {
        int colon = hostPort.lastIndexOf(':');
        return colon < 0 ? new Server(hostPort, defaultPort, user, password)
                : new Server(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)), user,
                        password);
    }

    private static String setting(String property, String variable) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) {
            value = System.getenv(variable);
        }
        return value == null || value.isBlank() ? null : value.trim();
    }

    private static String setting(String property, String variable, String fallback) {
        String value = setting(property, variable);
        return value == null ? fallback : value;
    }
}
