package io.quarkiverse.idempotency.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy on 127.0.0.1 in front of a real service, which a test cuts (every connection dropped, new ones
 * refused) and restores, without touching the shared service itself.
 */
public final class TcpProxy implements AutoCloseable {

    private final String targetHost;
    private final int targetPort;
    private final ServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile boolean open = true;

    public TcpProxy(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        // Listens until closed, also while cut: a port given up between a cut and a restore can be taken by any
        // outgoing connection on the machine as its ephemeral port, and the proxy could not have it back.
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "tcp-proxy-accept-" + port());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** @return a proxy in front of the PostgreSQL that a JDBC URL names */
    public static TcpProxy inFrontOfDatabase(String jdbcUrl) throws IOException {
        URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
        return new TcpProxy(uri.getHost(), uri.getPort() < 0 ? 5432 : uri.getPort());
    }

    /** @return the JDBC URL with this proxy's address in place of the database's */
    public String jdbcUrl(String jdbcUrl) {
        URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
        return "jdbc:postgresql://127.0.0.1:" + port() + uri.getRawPath()
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Drops every connection and refuses new ones: each is closed as soon as it is accepted. */
    public synchronized void cut() {
        open = false;
        for (Socket socket : sockets) {
            closeQuietly(socket);
        }
        sockets.clear();
    }

    /** Accepts connections again. */
    public synchronized void restore() {
        open = true;
    }

    private void accept() {
        while (!server.isClosed()) {
            Socket client = null;
            try {
                client = server.accept();
                connect(client);
            } catch (IOException e) {
                // closed by close(), or the upstream refused: the client sees its connection drop
                closeQuietly(client);
            }
        }
    }

    /** Under the lock {@link #cut()} takes, so that no connection it did not see outlives it. */
    private synchronized void connect(Socket client) throws IOException {
        if (!open) {
            closeQuietly(client);
            return;
        }
        Socket upstream = new Socket(targetHost, targetPort);
        sockets.add(client);
        sockets.add(upstream);
        pump(client, upstream);
        pump(upstream, client);
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // a side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }, "tcp-proxy-pump-" + port());
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() {
        cut();
        closeQuietly(server);
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                // closing anyway
            }
        }
    }
}
