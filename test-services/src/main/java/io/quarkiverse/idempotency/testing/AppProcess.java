package io.quarkiverse.idempotency.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.awaitility.Awaitility;

/**
 * The packaged application of the module under test as a separate process, as it runs in production, which a test can
 * kill with SIGKILL: the native executable when one was built ({@code native.image.path}, in native mode), else
 * {@code target/quarkus-app/quarkus-run.jar}. Its output goes to {@code target/<name>.log}.
 */
public final class AppProcess implements AutoCloseable {

    private static final Pattern LISTENING = Pattern.compile("Listening on: http://[^:]+:(\\d+)");

    /**
     * The processes started and still running. They stop with this JVM, even when a test did not close them or the build
     * was killed under it (Maven's test JVM then exits on its own): one left running would take the next run's
     * messages from the same queues, with a database the next run dropped under it.
     */
    private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(Process::destroyForcibly),
                "app-process-reaper"));
    }

    private final String name;
    private final Process process;
    private final Path log;

    private AppProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /** How a process that was expected to stop ended. */
    public record Exited(int code, String log) {
    }

    /**
     * Starts the application and waits until it is up.
     *
     * @param env its environment on top of this JVM's: the servers it reaches, its settings
     */
    public static AppProcess start(String name, Map<String, String> env) throws IOException {
        return startTogether(env, name).get(0);
    }

    /**
     * Starts the applications at once, then waits until each is up: none has a head start of its own startup time over
     * the others (a test that needs two consumers on one queue would otherwise see the first take everything).
     */
    public static List<AppProcess> startTogether(Map<String, String> env, String... names) throws IOException {
        List<AppProcess> apps = new ArrayList<>();
        for (String name : names) {
            Path log = Path.of("target", name + ".log");
            apps.add(new AppProcess(name, launch(log, env), log));
        }
        for (AppProcess app : apps) {
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
                if (!app.process.isAlive()) {
                    throw new IllegalStateException(app.name + " exited at startup; see " + app.log.toAbsolutePath());
                }
                return app.logText().contains("Installed features");
            });
        }
        return apps;
    }

    /** Starts the application and waits for it to exit by itself (a startup that fails). */
    public static Exited run(String name, Map<String, String> env, Duration atMost) throws Exception {
        Path log = Path.of("target", name + ".log");
        Files.deleteIfExists(log);
        Process process = launch(log, env);
        if (!process.waitFor(atMost.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException(name + " did not exit within " + atMost + "; see " + log.toAbsolutePath());
        }
        return new Exited(process.exitValue(), Files.readString(log));
    }

    private static Process launch(Path log, Map<String, String> env) throws IOException {
        // a log left by an earlier run would say "Installed features" before this process has started
        Files.deleteIfExists(log);
        List<String> command = new ArrayList<>();
        String nativeImage = System.getProperty("native.image.path");
        if (nativeImage != null && Files.isExecutable(Path.of(nativeImage))) {
            command.add(nativeImage);
        } else {
            Path jar = Path.of("target", "quarkus-app", "quarkus-run.jar");
            if (!Files.exists(jar)) {
                throw new IllegalStateException(jar.toAbsolutePath() + " is missing: package the application first");
            }
            command.add(ProcessHandle.current().info().command().orElse("java"));
            command.add("-jar");
            command.add(jar.toString());
        }
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        builder.environment().put("QUARKUS_HTTP_PORT", "0");
        builder.environment().putAll(env);
        Process process = builder.start();
        RUNNING.add(process);
        process.onExit().thenRun(() -> RUNNING.remove(process));
        return process;
    }

    /** SIGKILL: no shutdown hook, no graceful stop, unacked messages and claims left as they are. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    public long pid() {
        return process.pid();
    }

    /** @return the value of a Prometheus counter of this process, summed over series matching all the labels */
    public double metric(String name, String... labels) throws IOException, InterruptedException {
        Matcher m = LISTENING.matcher(logText());
        int port = -1;
        while (m.find()) {
            port = Integer.parseInt(m.group(1));
        }
        HttpResponse<String> response = scrape(port);
        double sum = 0;
        for (String line : response.body().split("\n")) {
            if (!line.startsWith(name + "{")) {
                continue;
            }
            boolean all = true;
            for (String label : labels) {
                all &= line.contains(label);
            }
            if (all) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    // Plain HTTP/1.1 (the client's default offer of an h2c upgrade is one more exchange that can stall), and a bound:
    // a read that does not answer within it is tried once more, then fails in seconds rather than at the suite's
    // timeout. (CI saw one scrape wait 30 minutes, until the process was stopped.)
    private static HttpResponse<String> scrape(int port) throws IOException, InterruptedException {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10)).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/q/metrics"))
                .timeout(Duration.ofSeconds(30)).build();
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (HttpTimeoutException e) {
            System.err.println("The metrics of the process on port " + port + " did not answer within 30 s; again");
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        }
    }

    /** @return the last lines of the process's output, without the stack frames of its exceptions */
    public String logTail(int lines) throws IOException {
        List<String> kept = logText().lines().filter(line -> !line.startsWith("\tat ") && !line.startsWith("\t..."))
                .toList();
        return String.join("\n", kept.subList(Math.max(0, kept.size() - lines), kept.size()));
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public String logText() throws IOException {
        return Files.exists(log) ? Files.readString(log) : "";
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    @Override
    public String toString() {
        return name + "(pid " + process.pid() + ")";
    }
}
