package io.quarkiverse.idempotency.runtime.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

class PoolCallsTest {

    @Test
    void questionMarksBecomeNumberedParametersOutsideQuotedLiterals() {
        assertEquals("SELECT $1, '?' FROM t WHERE a = $2 AND b = 'it''s ?' AND c = $3",
                PoolCalls.numbered("SELECT ?, '?' FROM t WHERE a = ? AND b = 'it''s ?' AND c = ?"));
    }

    @Test
    void everyStatementOfTheLeaseModeIsNumberedThrough() {
        RecordStatements sql = new RecordStatements("idempotency_record", false);
        for (String statement : new String[] { sql.claim, sql.state, sql.confirm, sql.recordFailureOfClaim,
                sql.recordFailureAfterRollback, sql.release, sql.peek }) {
            String numbered = PoolCalls.numbered(statement);
            assertFalse(numbered.contains("?"), numbered);
            long marks = statement.chars().filter(c -> c == '?').count();
            assertEquals(marks > 0, numbered.contains("$" + marks), numbered);
        }
    }
}
