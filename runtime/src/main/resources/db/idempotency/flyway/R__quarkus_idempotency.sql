-- The table of the quarkus-idempotency database store (PostgreSQL), for applications whose schema Flyway owns:
--     quarkus.flyway.locations=db/migration,classpath:db/idempotency/flyway
-- A repeatable migration: it has no version, so it never joins the application's own version sequence (timestamps
-- or not), and Flyway runs it after the versioned migrations, again only when a new version of the extension changes
-- it. Every statement does nothing when its part is already there, so it also adopts a table created by the earlier
-- versioned scripts, Hibernate ORM or the extension itself.
-- The placeholders default to quarkus.idempotency.database.table (the extension sets quarkus.flyway.placeholders.*):
-- idempotency_table as written there, idempotency_table_name without its schema; idempotency_partitioning follows
-- quarkus.idempotency.database.partitioning (time, or none when unset).

-- With partitioning time (and PostgreSQL 14 or later), a new table is partitioned by expiry: the purge job drops
-- expired partitions whole instead of deleting rows. The extension creates, at startup, its partitions
-- and the functions its keys are written with. Otherwise it is one table. An existing table keeps its layout (the
-- operations guide shows how to move a running one to partitions).
DO $$
DECLARE
    partitioned BOOLEAN := lower('${idempotency_partitioning}') = 'time'
        AND current_setting('server_version_num')::int >= 140000;
BEGIN
    IF to_regclass('${idempotency_table}') IS NULL THEN
        EXECUTE format('CREATE TABLE ${idempotency_table} (
            scoped_key   VARCHAR(255) NOT NULL,
            scope        VARCHAR(255) NOT NULL,
            state        VARCHAR(16)  NOT NULL,
            claimed_by   VARCHAR(128),
            recorded_at  TIMESTAMP WITH TIME ZONE NOT NULL,
            expires_at   TIMESTAMP WITH TIME ZONE NOT NULL,
            lease_until  TIMESTAMP WITH TIME ZONE,
            attempts     INTEGER NOT NULL DEFAULT 0,
            last_failure VARCHAR(1000),
            message_id   VARCHAR(255),
            fingerprint  VARCHAR(64),
            CONSTRAINT ${idempotency_table_name}_pkey PRIMARY KEY %s
        ) %s', CASE WHEN partitioned THEN '(scoped_key, expires_at)' ELSE '(scoped_key)' END,
            CASE WHEN partitioned THEN 'PARTITION BY RANGE (expires_at)' ELSE '' END);
    END IF;
END
$$;

-- A table of an earlier version: leases of seconds, attempt budgets, dead-lettered keys, message facts. (Checked first, rather than
-- ADD COLUMN IF NOT EXISTS, so that a fresh table does not make Flyway log PostgreSQL's "already exists" notices.)
DO $$
DECLARE
    state_check TEXT;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '${idempotency_table}'::regclass
            AND attname = 'last_failure' AND NOT attisdropped) THEN
        ALTER TABLE ${idempotency_table} ADD COLUMN IF NOT EXISTS lease_until TIMESTAMP WITH TIME ZONE,
            ADD COLUMN IF NOT EXISTS attempts INTEGER NOT NULL DEFAULT 0,
            ADD COLUMN IF NOT EXISTS last_failure VARCHAR(1000);
    END IF;
    -- what a duplicate is compared with: the id and payload fingerprint of the message that wrote the key
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '${idempotency_table}'::regclass
            AND attname = 'fingerprint' AND NOT attisdropped) THEN
        ALTER TABLE ${idempotency_table} ADD COLUMN IF NOT EXISTS message_id VARCHAR(255),
            ADD COLUMN IF NOT EXISTS fingerprint VARCHAR(64);
    END IF;
    -- No check constraint on the state column (earlier versions' tables and Hibernate ORM's had one): PostgreSQL
    -- prepares a table's check constraints again for every statement that writes a row, 10-15 us a write.
    FOR state_check IN SELECT conname FROM pg_constraint WHERE conrelid = '${idempotency_table}'::regclass
            AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%state%= ANY%''CLAIMED''%''CONFIRMED''%' LOOP
        EXECUTE format('ALTER TABLE ${idempotency_table} DROP CONSTRAINT %I', state_check);
    END LOOP;
END
$$;

-- The purge job deletes an unpartitioned table's keys by expiry: an index range scan, not a table scan.
DO $$
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = '${idempotency_table}'::regclass) <> 'p' THEN
        CREATE INDEX IF NOT EXISTS ${idempotency_table_name}_expires_at ON ${idempotency_table} (expires_at);
    END IF;
END
$$;
-- The age of the oldest live claim (a metric, and the Dev UI) reads only the claims, not the whole table.
CREATE INDEX IF NOT EXISTS ${idempotency_table_name}_claims ON ${idempotency_table} (recorded_at)
    WHERE state = 'CLAIMED';
