-- Leases of seconds, attempt budgets and dead-lettered keys (quarkus-idempotency 1.0).
-- A CLAIMED record is honoured until lease_until; records written before this column existed have none and are
-- honoured for five minutes after their last renewal, as those versions did.
ALTER TABLE idempotency_record ADD COLUMN IF NOT EXISTS lease_until TIMESTAMP WITH TIME ZONE;
ALTER TABLE idempotency_record ADD COLUMN IF NOT EXISTS attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE idempotency_record ADD COLUMN IF NOT EXISTS last_failure VARCHAR(1000);
ALTER TABLE idempotency_record DROP CONSTRAINT IF EXISTS idempotency_record_state_check;
ALTER TABLE idempotency_record ADD CONSTRAINT idempotency_record_state_check
    CHECK (state IN ('CLAIMED', 'CONFIRMED', 'FAILED', 'DEAD_LETTERED'));
