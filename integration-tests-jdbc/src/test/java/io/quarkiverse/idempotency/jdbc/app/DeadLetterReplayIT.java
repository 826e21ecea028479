package io.quarkiverse.idempotency.jdbc.app;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

import io.quarkiverse.idempotency.testing.AppProcess;
import io.quarkiverse.idempotency.testing.RabbitQueues;
import io.quarkiverse.idempotency.testing.TestServices;
import io.vertx.core.json.JsonObject;

/**
 * Dead letters replayed through the management endpoint of the packaged application (the native executable in native
 * mode), on the real RabbitMQ and PostgreSQL. 100 payments dead-lettered for two reasons, one replayed once its cause
 * is gone: those charged once each, the others still dead-lettered, in the queue and the table. 1,000 payments
 * dead-lettered, then a replay stopped by SIGKILL while it moves them; after a restart, a second replay moves the rest:
 * every payment charged exactly once, the dead-letter queue empty, no key left dead-lettered.
 */
class DeadLetterReplayIT {

    static final String DATABASE = "jdbc_replay_it";
    static final String QUEUE = "jdbc-replays";
    static final String DLQ = QUEUE + ".dlq";
    static final String CHANNEL = "jdbc-payments";
    static final String FAULT = "card declined by the issuer";
    static final int PAYMENTS = 1000;

    @Test
    void oneReasonOfAHundredDeadLettersIsReplayedAndChargedOnceWhileTheOtherStaysDeadLettered() throws Exception {
        String timedOut = "gateway timed out";
        TestServices.Server db = TestServices.freshDatabase(DATABASE);
        int management = freePort();
        try (RabbitQueues broker = new RabbitQueues("idempotency-jdbc-replay-reasons");
                AppProcess app = AppProcess.start("replay-reasons", env(db, management))) {
            broker.purge(QUEUE);
            update("DELETE FROM jdbc_charge WHERE order_id LIKE ?", "T-%");
            update("INSERT INTO jdbc_fault VALUES (?) ON CONFLICT DO NOTHING", FAULT);
            update("INSERT INTO jdbc_fault VALUES (?) ON CONFLICT DO NOTHING", timedOut);
            for (int i = 0; i < 100; i++) {
                broker.publish(QUEUE, "t-" + i, RabbitQueues.payment("T-" + i,
                        "\"fault\": \"" + (i % 2 == 0 ? FAULT : timedOut) + "\""));
            }
            awaitOrExplain(Duration.ofSeconds(120), () -> broker.ready(DLQ) == 100, "100 dead letters in " + DLQ,
                    broker, app);
            update("DELETE FROM jdbc_fault WHERE fault = ?", FAULT); // the fix of one cause

            HttpResponse<String> answer = post(management, "op-secret", "&reason=declined");
            assertEquals(200, answer.statusCode(), answer.body());
            assertEquals(new JsonObject().put("channel", CHANNEL).put("replayed", 50).put("released", 50)
                    .put("skipped", 50).put("left", 50), new JsonObject(answer.body()));
            await().atMost(Duration.ofSeconds(60)).until(() -> count("SELECT count(*) FROM jdbc_charge WHERE order_id"
                    + " LIKE 'T-%'") == 50);
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10))
                    .until(() -> broker.ready(QUEUE) == 0 && broker.ready(DLQ) == 50);
            for (int i = 0; i < 100; i++) {
                boolean declined = i % 2 == 0;
                assertEquals(declined ? 1 : 0, count("SELECT count(*) FROM jdbc_charge WHERE order_id = 'T-" + i
                        + "'"), "T-" + i);
                assertEquals(declined ? "CONFIRMED" : "DEAD_LETTERED", text("SELECT state FROM idempotency_record"
                        + " WHERE scoped_key = '" + CHANNEL + ":t-" + i + "'"), "t-" + i);
            }
        } finally {
            update("DELETE FROM jdbc_fault WHERE fault = ?", timedOut);
        }
    }

    @Test
    void aReplayKilledHalfWayThenRunAgainLosesNothingAndChargesNothingTwice() throws Exception {
        TestServices.Server db = TestServices.freshDatabase(DATABASE);
        int management = freePort();
        Map<String, String> env = env(db, management);
        try (RabbitQueues broker = new RabbitQueues("idempotency-jdbc-replay")) {
            try (AppProcess first = AppProcess.start("replay-first", env)) {
                broker.purge(QUEUE);
                update("DELETE FROM jdbc_charge WHERE order_id LIKE ?", "R-%");
                update("INSERT INTO jdbc_fault VALUES (?) ON CONFLICT DO NOTHING", FAULT);
                for (int i = 0; i < PAYMENTS; i++) {
                    broker.publish(QUEUE, "r-" + i, RabbitQueues.payment("R-" + i, "\"fault\": \"" + FAULT + "\""));
                }
                awaitOrExplain(Duration.ofSeconds(180), () -> broker.ready(DLQ) == PAYMENTS,
                        PAYMENTS + " dead letters in " + DLQ, broker, first);
                assertEquals(PAYMENTS, count("SELECT count(*) FROM idempotency_record WHERE state = 'DEAD_LETTERED'"
                        + " AND scoped_key LIKE '" + CHANNEL + ":r-%'"));
                assertEquals(0, count("SELECT count(*) FROM jdbc_charge WHERE order_id LIKE 'R-%'"),
                        "every attempt rolled back");
                assertEquals(401, post(management, null).statusCode(), "no replay without credentials");

                update("DELETE FROM jdbc_fault WHERE fault = ?", FAULT); // the fix
                Thread replay = new Thread(() -> {
                    try {
                        post(management, "op-secret");
                    } catch (IOException | InterruptedException e) {
                        // the process is killed under it
                    }
                });
                replay.start();
                await().pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(60))
                        .until(() -> broker.ready(DLQ) < PAYMENTS * 4 / 5);
                first.kill();
                replay.join(30_000);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> stable(broker));
            long left = broker.ready(DLQ);
            long charged = count("SELECT count(*) FROM jdbc_charge WHERE order_id LIKE 'R-%'");
            System.out.println("REPLAY killed: " + (PAYMENTS - left) + " of " + PAYMENTS + " moved, " + charged
                    + " charged");
            assertTrue(left < PAYMENTS, "the replay had moved some: " + left + " left");
            assertTrue(left > 0, "and was killed before it moved them all");

            try (AppProcess second = AppProcess.start("replay-second", env)) {
                long started = System.nanoTime();
                HttpResponse<String> answer = post(management, "op-secret");
                long millis = (System.nanoTime() - started) / 1_000_000;
                assertEquals(200, answer.statusCode(), answer.body());
                JsonObject done = new JsonObject(answer.body());
                System.out.println("REPLAY again: " + done.getLong("replayed") + " dead letters in " + millis + " ms ("
                        + done.getLong("replayed") * 1000 / Math.max(1, millis) + "/s)");
                assertEquals(left, done.getLong("replayed"), answer.body());
                awaitOrExplain(Duration.ofSeconds(120),
                        () -> count("SELECT count(DISTINCT order_id) FROM jdbc_charge") == PAYMENTS
                                && broker.ready(QUEUE) == 0,
                        "every payment charged", broker, second);
                await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10))
                        .until(() -> broker.ready(QUEUE) == 0 && broker.ready(DLQ) == 0);
                assertEquals(PAYMENTS, count("SELECT count(*) FROM jdbc_charge WHERE order_id LIKE 'R-%'"),
                        "each payment charged once");
                assertEquals(0, count("SELECT count(*) FROM idempotency_record WHERE state = 'DEAD_LETTERED'"
                        + " AND scoped_key LIKE '" + CHANNEL + ":r-%'"));
                assertEquals(PAYMENTS, count("SELECT count(*) FROM idempotency_record WHERE state = 'CONFIRMED'"
                        + " AND scoped_key LIKE '" + CHANNEL + ":r-%'"));
            }
        }
    }

    // A condition that did not come true fails with what the broker, the store and the application's log say.
    private static void awaitOrExplain(Duration atMost, Callable<Boolean> condition, String what, RabbitQueues broker,
            AppProcess app) throws IOException {
        try {
            await().atMost(atMost).until(condition);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("not " + what + " within " + atMost + ": " + broker.describe(QUEUE, DLQ)
                    + "; keys " + states() + "; charged " + count("SELECT count(*) FROM jdbc_charge") + "; " + app
                    + (app.isAlive() ? "" : " (exited)") + ", the end of its log:\n" + app.logTail(40), e);
        }
    }

    private static String states() {
        try (Connection c = connect();
                PreparedStatement ps = c.prepareStatement("SELECT state, count(*) FROM idempotency_record GROUP BY state"
                        + " ORDER BY state");
                ResultSet rs = ps.executeQuery()) {
            StringBuilder states = new StringBuilder();
            while (rs.next()) {
                states.append(states.isEmpty() ? "" : ", ").append(rs.getString(1)).append(' ').append(rs.getLong(2));
            }
            return states.isEmpty() ? "none" : states.toString();
        } catch (SQLException e) {
            return "unreadable (" + e + ")";
        }
    }

    // the dead-letter queue's count once the broker took back what the killed connection left unacknowledged
    private static boolean stable(RabbitQueues broker) throws InterruptedException {
        long before = broker.ready(DLQ);
        Thread.sleep(500);
        return before > 0 && broker.ready(DLQ) == before;
    }

    private static Map<String, String> env(TestServices.Server db, int management) {
        Map<String, String> env = new HashMap<>();
        TestServices.rabbitmqSettings().forEach((name, value) -> env.put(name.toUpperCase().replace('-', '_'), value));
        env.put("QUARKUS_DATASOURCE_JDBC_URL", db.jdbcUrl(DATABASE));
        env.put("QUARKUS_DATASOURCE_USERNAME", db.user());
        env.put("QUARKUS_DATASOURCE_PASSWORD", db.password());
        env.put("MP_MESSAGING_INCOMING_JDBC_PAYMENTS_QUEUE_NAME", QUEUE);
        env.put("MP_MESSAGING_INCOMING_JDBC_PAYMENTS_EXCHANGE_NAME", QUEUE);
        env.put("QUARKUS_MANAGEMENT_PORT", String.valueOf(management));
        env.put("JDBC_OPERATOR_PASSWORD", "op-secret");
        return env;
    }

    private static HttpResponse<String> post(int port, String password) throws IOException, InterruptedException {
        return post(port, password, "&all=true");
    }

    private static HttpResponse<String> post(int port, String password, String filter)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/q/idempotency/dead-letters/replay?channel=" + CHANNEL + "&limit=10000" + filter))
                .timeout(Duration.ofSeconds(120)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.noBody());
        if (password != null) {
            request.header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString(("operator:" + password).getBytes(StandardCharsets.UTF_8)));
        }
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build().send(request.build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static long count(String sql) {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String text(String sql) {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            return rs.next() ? rs.getString(1) : null;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void update(String sql, String parameter) {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, parameter);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Connection connect() throws SQLException {
        TestServices.Server db = TestServices.postgres();
        return DriverManager.getConnection(db.jdbcUrl(DATABASE), db.user(), db.password());
    }
}
