package io.quarkiverse.idempotency.deployment;

import java.util.Locale;
import java.util.Set;

/**
 * PostgreSQL's reserved key words, which cannot name a table unquoted.
 */
final class SqlKeywords {

    private static final Set<String> RESERVED = Set.of("all", "analyse", "analyze", "and", "any", "array", "as",
            "asc", "asymmetric", "both", "case", "cast", "check", "collate", "column", "constraint", "create",
            "current_catalog", "current_date", "current_role", "current_time", "current_timestamp", "current_user",
            "default", "deferrable", "desc", "distinct", "do", "else", "end", "except", "false", "fetch", "for",
            "foreign", "from", "grant", "group", "having", "in", "initially", "intersect", "into", "lateral",
            "leading", "limit", "localtime", "localtimestamp", "not", "null", "offset", "on", "only", "or", "order",
            "placing", "primary", "references", "returning", "select", "session_user", "some", "symmetric",
            "system_user", "table", "then", "to", "trailing", "true", "union", "unique", "user", "using", "variadic",
            "when", "where", "window", "with");

    private SqlKeywords() {
    }

    /** @return whether a part of a (schema-qualified) name is a reserved word */
    static boolean reserved(String qualifiedName) {
        for (String part : qualifiedName.split("\\.")) {
            if (RESERVED.contains(part.toLowerCase(Locale.ROOT))) {
                return true;
            }
        }
        return false;
    }
}
