-- What a duplicate is compared with (quarkus-idempotency 1.1): the id and the payload fingerprint of the message that
-- wrote the key. Keys written before these columns existed have neither: their duplicates are "unknown", never
-- mismatches.
ALTER TABLE idempotency_record ADD COLUMN IF NOT EXISTS message_id VARCHAR(255);
ALTER TABLE idempotency_record ADD COLUMN IF NOT EXISTS fingerprint VARCHAR(64);
