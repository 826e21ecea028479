package io.quarkiverse.idempotency.runtime;

import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Optional;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

/**
 * The identity of this process start in the store: host, pid and a random part, so that a restarted process never
 * mistakes its dead predecessor's claims for live ones of its own. With {@code quarkus.idempotency.instance-id}, the
 * instance's name and this start's incarnation ({@code <instance-id>@<start>:<random>}), so that a restarted instance
 * can tell its earlier starts' claims from every other instance's ({@link EarlierIncarnations}).
 */
@Singleton
public class WorkerId {

    /** Separates the instance's name from the incarnation; a claim's token adds {@code #} and a number. */
    static final char INCARNATION = '@';

    private final String value;
    private final String instance;

    /** A worker id without an instance name: host, pid and a random part. */
    public WorkerId() {
        this(Optional.empty());
    }

    @Inject
    public WorkerId(IdempotencyConfig config) {
        this(config.instanceId());
    }

    /** @param instanceId the instance's name ({@code quarkus.idempotency.instance-id}), if it has one */
    public WorkerId(Optional<String> instanceId) {
        byte[] random = new byte[6];
        new SecureRandom().nextBytes(random);
        String unique = HexFormat.of().formatHex(random);
        this.instance = instanceId.map(WorkerId::checked).orElse(null);
        this.value = instance != null
                ? instance + INCARNATION + Long.toString(System.currentTimeMillis(), 36) + ":" + unique
                : truncate(hostName(), 64) + ":" + ProcessHandle.current().pid() + ":" + unique;
    }

    /** @return the worker id, at most 100 characters */
    public String value() {
        return value;
    }

    /** @return the name of this instance ({@code quarkus.idempotency.instance-id}), or {@code null} when it has none */
    public String instance() {
        return instance;
    }

    @Override
    public String toString() {
        return value;
    }

    private static String checked(String instanceId) {
        if (instanceId.isBlank() || instanceId.length() > 64 || instanceId.indexOf(INCARNATION) >= 0
                || instanceId.indexOf('#') >= 0) {
            throw new IllegalArgumentException("quarkus.idempotency.instance-id '" + instanceId + "' is not a name this"
                    + " extension can keep: it must be 1 to 64 characters without '@' or '#'; use the pod's name, for"
                    + " example");
        }
        return instanceId;
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            String env = System.getenv("HOSTNAME");
            return env == null || env.isBlank() ? "unknown-host" : env;
        }
    }

    private static String truncate(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max);
    }
}
