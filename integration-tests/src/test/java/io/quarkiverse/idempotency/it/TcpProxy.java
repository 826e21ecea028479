package io.quarkiverse.idempotency.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy on 127.0.0.1 in front of a real service, which a test cuts (every connection dropped, new ones
 * refused) and restores, without touching the shared service itself.
 */
public final class TcpProxy implements AutoCloseable {

    private final String targetHost;
    private final int targetPort;
    private final int port;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile ServerSocket server;

    public TcpProxy(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        try (ServerSocket probe = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            this.port = probe.getLocalPort();
        }
        restore();
    }

    public int port() {
        return port;
    }

    /** Drops every connection and refuses new ones. */
    public synchronized void cut() {
        ServerSocket s = server;
        server = null;
        closeQuietly(s);
        for (Socket socket : sockets) {
            closeQuietly(socket);
        }
        sockets.clear();
    }

    /** Accepts connections again, on the same port. */
    public synchronized void restore() throws IOException {
        if (server != null) {
            return;
        }
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        server = s;
        Thread acceptor = new Thread(() -> accept(s), "tcp-proxy-accept-" + port);
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void accept(ServerSocket s) {
        while (!s.isClosed()) {
            try {
                Socket client = s.accept();
                Socket upstream = new Socket(targetHost, targetPort);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                // closed by cut(), or the upstream refused: the client sees its connection drop
            }
        }
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
        }, "tcp-proxy-pump-" + port);
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() {
        cut();
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
