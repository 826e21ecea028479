package io.quarkiverse.idempotency.benchmark;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.apache.camel.CamelContext;
import org.apache.camel.processor.idempotent.jdbc.JdbcMessageIdRepository;
import org.apache.camel.processor.idempotent.jdbc.JdbcOrphanLockAwareIdempotentRepository;
import org.apache.camel.spi.ExecutorServiceManager;
import org.springframework.integration.jdbc.metadata.JdbcMetadataStore;

import io.agroal.api.AgroalDataSource;
import io.quarkus.runtime.ShutdownEvent;

/**
 * The peers, set up as their own documentation shows, on the same PostgreSQL: Apache Camel's
 * {@code JdbcMessageIdRepository} and {@code JdbcOrphanLockAwareIdempotentRepository} (camel-sql), and Spring
 * Integration's {@code JdbcMetadataStore} (the store of its idempotent receiver), each with its own table, created
 * with the DDL each ships.
 */
@Singleton
public class Peers {

    /** Camel's DDL (JdbcMessageIdRepository.DEFAULT_CREATE_STRING), shared by both Camel repositories. */
    static final String CAMEL_TABLE = "CREATE TABLE IF NOT EXISTS CAMEL_MESSAGEPROCESSED (processorName VARCHAR(255),"
            + " messageId VARCHAR(100), createdAt TIMESTAMP, PRIMARY KEY (processorName, messageId))";
    /** Spring Integration's DDL (org/springframework/integration/jdbc/schema-postgresql.sql). */
    static final String SPRING_TABLE = "CREATE TABLE IF NOT EXISTS INT_METADATA_STORE (METADATA_KEY VARCHAR(255) NOT NULL,"
            + " METADATA_VALUE VARCHAR(4000), REGION VARCHAR(100) NOT NULL,"
            + " constraint INT_METADATA_STORE_PK primary key (METADATA_KEY, REGION))";

    @Inject
    AgroalDataSource dataSource;

    JdbcMessageIdRepository camel;
    JdbcOrphanLockAwareIdempotentRepository camelOrphanLock;
    JdbcMetadataStore spring;
    private ExecutorService keepAlive;

    @PostConstruct
    void start() {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(CAMEL_TABLE);
            s.execute(SPRING_TABLE);
            s.execute("TRUNCATE CAMEL_MESSAGEPROCESSED");
            s.execute("TRUNCATE INT_METADATA_STORE");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        // Camel's own transaction per call (a DataSourceTransactionManager): used outside the handler's transaction
        camel = new JdbcMessageIdRepository(dataSource, "bench");
        camel.start();
        camelOrphanLock = orphanLockAware("bench-orphan-lock");
        spring = new JdbcMetadataStore(dataSource);
        spring.afterPropertiesSet();
    }

    /**
     * The orphan-lock-aware repository, whose heartbeat runs on a scheduled executor it asks its CamelContext for:
     * a stand-in context gives it one (the repository uses nothing else of it).
     */
    JdbcOrphanLockAwareIdempotentRepository orphanLockAware(String processorName) {
        ExecutorServiceManager executors = (ExecutorServiceManager) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] { ExecutorServiceManager.class },
                (proxy, method, args) -> switch (method.getName()) {
                    case "newSingleThreadScheduledExecutor" -> {
                        var executor = Executors.newSingleThreadScheduledExecutor(r -> {
                            Thread t = new Thread(r, "camel-orphan-lock-keep-alive");
                            t.setDaemon(true);
                            return t;
                        });
                        keepAlive = executor;
                        yield executor;
                    }
                    case "shutdownGraceful" -> {
                        ((ExecutorService) args[0]).shutdown();
                        yield null;
                    }
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> "executors";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        CamelContext context = (CamelContext) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] { CamelContext.class }, (proxy, method, args) -> switch (method.getName()) {
                    case "getExecutorServiceManager" -> executors;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> "camel-context";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        JdbcOrphanLockAwareIdempotentRepository repository = new JdbcOrphanLockAwareIdempotentRepository(dataSource,
                processorName, context);
        repository.setLockMaxAgeMillis(30_000);
        repository.setLockKeepAliveIntervalMillis(10_000);
        repository.start();
        return repository;
    }

    // at shutdown, before the datasource closes (a @PreDestroy would run after it, and the keep-alive thread would
    // log that it cannot reach the database)
    void stop(@Observes ShutdownEvent event) {
        camelOrphanLock.shutdown();
        if (keepAlive != null) {
            keepAlive.shutdownNow();
        }
    }
}
