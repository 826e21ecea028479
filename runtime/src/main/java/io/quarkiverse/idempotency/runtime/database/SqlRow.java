package io.quarkiverse.idempotency.runtime.database;

import java.util.ArrayList;
import java.util.List;

/**
 * A row of the key table's statements, whichever way it was read ({@link SqlCalls}): its columns by position from 0,
 * {@code null} where the column is.
 */
public final class SqlRow {

    private final Object[] columns;

    SqlRow(Object[] columns) {
        this.columns = columns;
    }

    public String string(int column) {
        Object value = columns[column];
        return value == null ? null : value.toString();
    }

    public Integer integer(int column) {
        return columns[column] instanceof Number n ? n.intValue() : null;
    }

    /** @return the column as an int, 0 where it is {@code null} */
    public int count(int column) {
        return columns[column] instanceof Number n ? n.intValue() : 0;
    }

    public Long number(int column) {
        return columns[column] instanceof Number n ? n.longValue() : null;
    }

    public Double fraction(int column) {
        return columns[column] instanceof Number n ? n.doubleValue() : null;
    }

    /** @return a text array column's elements, none where it is {@code null} */
    public List<String> strings(int column) {
        if (!(columns[column] instanceof Object[] values)) {
            return List.of();
        }
        List<String> strings = new ArrayList<>(values.length);
        for (Object value : values) {
            strings.add(value == null ? null : value.toString());
        }
        return strings;
    }

    public boolean isTrue(int column) {
        return Boolean.TRUE.equals(columns[column]);
    }

    /** @return a timestamp column as an ISO-8601 instant, {@code null} where it is */
    public String instant(int column) {
        Object value = columns[column];
        if (value instanceof java.sql.Timestamp timestamp) {
            return timestamp.toInstant().toString();
        }
        if (value instanceof java.time.OffsetDateTime time) {
            return time.toInstant().toString();
        }
        return value == null ? null : value.toString();
    }
}
