package io.quarkiverse.idempotency.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * The log messages' codes are what operators search for: each message has its own, in the range of its part, and the
 * reference lists every one with its level, and nothing else.
 */
class MessageCodesTest {

    private static final Path LOGGER = Path.of("src/main/java/io/quarkiverse/idempotency/runtime/IdempotencyLogger.java");
    private static final Path REFERENCE = Path.of("../docs/modules/ROOT/pages/reference.adoc");

    @Test
    void eachMessageHasItsOwnCodeAndTheReferenceListsThemAll() throws IOException {
        Map<Integer, String> declared = declared();
        assertTrue(declared.size() >= 30, "the messages were found: " + declared.keySet());
        Map<Integer, String> listed = new LinkedHashMap<>();
        Matcher row = Pattern.compile("^\\|`IDEMP(\\d{4})` \\|(\\w+) \\|", Pattern.MULTILINE)
                .matcher(Files.readString(REFERENCE));
        while (row.find()) {
            assertFalse(listed.containsKey(Integer.parseInt(row.group(1))), "listed twice: IDEMP" + row.group(1));
            listed.put(Integer.parseInt(row.group(1)), row.group(2));
        }
        assertEquals(declared, listed, "the reference's section 'Log messages' lists each code with its level");
    }

    // The codes and levels of IdempotencyLogger, from its source: the annotations are not kept in the class file.
    private static Map<Integer, String> declared() throws IOException {
        Map<Integer, String> declared = new LinkedHashMap<>();
        List<Integer> order = new ArrayList<>();
        Matcher message = Pattern.compile("@LogMessage\\(level = (\\w+)\\)\\s*@Message\\(id = (\\d+),")
                .matcher(Files.readString(LOGGER));
        while (message.find()) {
            int id = Integer.parseInt(message.group(2));
            assertFalse(declared.containsKey(id), "code " + id + " is used twice");
            assertTrue(id >= 1000 && id < 7000, "code " + id + " is outside the parts' ranges");
            declared.put(id, message.group(1));
            order.add(id);
        }
        List<Integer> sorted = new ArrayList<>(order);
        sorted.sort(null);
        assertEquals(sorted, order, "the messages are declared in the order of their codes");
        return declared;
    }
}
