// Many Temporal time-skipping test servers in one JVM, each a server of its own (its own clock, workflows and
// port), started and stopped on request: a jest run's files then share one warm JVM instead of starting one each.
// Run as `TestServers <port file>`: it listens on a loopback port of the OS's choosing (a port picked beforehand by
// the caller could be taken by another process before this JVM binds it) and writes the port to that file. Control:
// one line per TCP connection to that port:
//   start       -> "started <port>"   a new server on a free loopback port, time skipping locked as the SDK expects
//   stop <port> -> "stopped <port>"
// The JVM exits when the process that started it does (the jest run ended, even killed).
import io.temporal.testserver.TestServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

public final class TestServers {
  private static final Map<Integer, TestServer.PortBoundTestServer> servers = new ConcurrentHashMap<>();

  public static void main(String[] args) throws IOException {
    ProcessHandle.current().parent().ifPresent((parent) -> parent.onExit().thenRun(() -> System.exit(0)));
    ServerSocket control = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
    // Written whole under another name, then renamed: the caller never reads half a port.
    Path portFile = Path.of(args[0]);
    Path written = Path.of(args[0] + ".tmp");
    Files.writeString(written, Integer.toString(control.getLocalPort()));
    Files.move(written, portFile, StandardCopyOption.ATOMIC_MOVE);
    for (;;) {
      Socket socket = control.accept();
      Thread handler = new Thread(() -> answer(socket));
      handler.setDaemon(true);
      handler.start();
    }
  }

  private static void answer(Socket socket) {
    try (socket;
        BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(socket.getOutputStream(), true, StandardCharsets.UTF_8)) {
      String line = in.readLine();
      if (line == null) return; // a readiness probe: connected, asked nothing
      String[] words = line.trim().split("\\s+");
      if (words[0].equals("start")) {
        out.println("started " + start());
      } else if (words[0].equals("stop") && words.length == 2) {
        int port = Integer.parseInt(words[1]);
        TestServer.PortBoundTestServer server = servers.remove(port);
        if (server != null) server.close();
        out.println("stopped " + port);
      } else {
        out.println("error unknown command: " + line);
      }
    } catch (Exception error) {
      System.err.println("test servers: " + error);
    }
  }

  /** A server on a free port; another process may take the port between the probe and the bind, so a few tries. */
  private static int start() throws IOException {
    RuntimeException last = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      int port;
      try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        port = probe.getLocalPort();
      }
      try {
        servers.put(port, TestServer.createPortBoundServer(port, true));
        return port;
      } catch (RuntimeException error) {
        last = error;
      }
    }
    throw last;
  }
}
