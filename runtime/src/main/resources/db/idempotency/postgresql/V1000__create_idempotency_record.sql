-- The table of the quarkus-idempotency database store (PostgreSQL).
-- Flyway: quarkus.flyway.locations=db/migration,classpath:db/idempotency/postgresql
-- The version (1000) leaves room below for the application's own migrations; rename it if it clashes.
CREATE TABLE IF NOT EXISTS idempotency_record (
    scoped_key  VARCHAR(255) NOT NULL PRIMARY KEY,
    scope       VARCHAR(255) NOT NULL,
    state       VARCHAR(16)  NOT NULL CHECK (state IN ('CLAIMED', 'CONFIRMED')),
    claimed_by  VARCHAR(128),
    recorded_at TIMESTAMP WITH TIME ZONE NOT NULL,
    expires_at  TIMESTAMP WITH TIME ZONE NOT NULL
);

-- The purge job deletes by expiry: this keeps it an index range scan, not a table scan.
CREATE INDEX IF NOT EXISTS idempotency_record_expires_at ON idempotency_record (expires_at);
