-- The age of the oldest live claim (a metric, and the Dev UI) reads only the claims, not the whole table.
CREATE INDEX IF NOT EXISTS idempotency_record_claims ON idempotency_record (recorded_at) WHERE state = 'CLAIMED';
