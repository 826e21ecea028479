package io.quarkiverse.idempotency.benchmark;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A consumer in a process of its own: this benchmark's jar started as the consumer of one channel, on a queue of its
 * own (see {@link RecoveryRun#consume}), for the measurements that kill, restart or isolate a consumer. Its output goes
 * to a log under {@code benchmark/target}; this process's schema is its own, which the child must not drop.
 */
final class ConsumerProcess {

    private ConsumerProcess() {
    }

    /** @return the log of a child of that name */
    static Path log(String name) {
        Path dir = Files.isDirectory(Path.of("benchmark", "target")) ? Path.of("benchmark", "target")
                : Path.of(System.getProperty("java.io.tmpdir"));
        return dir.resolve(name + ".log");
    }

    /**
     * Starts the consumer of a channel on a queue, with more system properties, and waits until it consumes (its
     * channel resumed, or ready for its parent's commands); a child that exits or does not start within two minutes
     * fails the run, naming its log, and is stopped.
     */
    static Process start(String channel, String queue, List<String> properties, Path log) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(java, "-D" + RecoveryRun.ROLE + "=" + channel,
                "-Dmp.messaging.incoming." + channel + ".queue.name=" + queue,
                "-Dquarkus.hibernate-orm.schema-management.strategy=none"));
        command.addAll(properties);
        command.addAll(List.of("-jar", System.getProperty("java.class.path")));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        // a child left running would hold messages of this benchmark's queues (its paused channels' prefetch)
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!Files.readString(log).contains(RecoveryRun.READY)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the consumer of " + queue + " exited; see " + log);
            }
            if (System.nanoTime() > deadline) {
                process.destroyForcibly();
                throw new IllegalStateException("timed out waiting for the consumer of " + queue + "; see " + log);
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
        return process;
    }
}
