package io.quarkiverse.idempotency.runtime;

import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.HexFormat;

import jakarta.inject.Singleton;

/**
 * The identity of this process start in the store: host, pid and a random part, so that a restarted process never
 * mistakes its dead predecessor's claims for live ones of its own.
 */
@Singleton
public class WorkerId {

    private final String value;

    public WorkerId() {
        byte[] random = new byte[6];
        new SecureRandom().nextBytes(random);
        this.value = truncate(hostName(), 64) + ":" + ProcessHandle.current().pid() + ":" + HexFormat.of().formatHex(random);
    }

    /** @return the worker id, at most 100 characters */
    public String value() {
        return value;
    }

    @Override
    public String toString() {
        return value;
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
