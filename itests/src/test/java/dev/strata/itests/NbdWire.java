package dev.strata.itests;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A minimal NBD client for black-box tests: fixed newstyle handshake with NBD_OPT_EXPORT_NAME,
 * then one request at a time with simple replies, so the test knows exactly which writes and
 * flushes the server acknowledged.
 */
final class NbdWire implements AutoCloseable {
    private static final long IHAVEOPT = 0x49484156454F5054L;
    private static final int REQUEST_MAGIC = 0x25609513;
    private static final int REPLY_MAGIC = 0x67446698;
    private static final int READ = 0;
    private static final int WRITE = 1;
    private static final int DISCONNECT = 2;
    private static final int FLUSH = 3;

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    final long size;
    private long handles;

    NbdWire(int port, String export) throws IOException {
        socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        socket.setSoTimeout(120_000); // a hang fails the test instead of blocking it
        socket.setTcpNoDelay(true);
        in = new DataInputStream(socket.getInputStream());
        out = new DataOutputStream(socket.getOutputStream());
        in.readLong(); // NBDMAGIC
        if (in.readLong() != IHAVEOPT) {
            throw new IOException("not a newstyle NBD server");
        }
        int flags = in.readUnsignedShort();
        boolean noZeroes = (flags & 2) != 0;
        out.writeInt(noZeroes ? 3 : 1);
        byte[] name = export.getBytes(StandardCharsets.UTF_8);
        out.writeLong(IHAVEOPT);
        out.writeInt(1); // NBD_OPT_EXPORT_NAME
        out.writeInt(name.length);
        out.write(name);
        out.flush();
        size = in.readLong();
        in.readUnsignedShort(); // transmission flags
        if (!noZeroes) {
            in.skipNBytes(124);
        }
    }

    void write(long offset, byte[] data) throws IOException {
        request(WRITE, offset, data.length, data);
        reply(null);
    }

    void flush() throws IOException {
        request(FLUSH, 0, 0, null);
        reply(null);
    }

    byte[] read(long offset, int length) throws IOException {
        request(READ, offset, length, null);
        byte[] b = new byte[length];
        reply(b);
        return b;
    }

    private void request(int type, long offset, int length, byte[] data) throws IOException {
        out.writeInt(REQUEST_MAGIC);
        out.writeShort(0);
        out.writeShort(type);
        out.writeLong(++handles);
        out.writeLong(offset);
        out.writeInt(length);
        if (data != null) {
            out.write(data);
        }
        out.flush();
    }

    private void reply(byte[] data) throws IOException {
        if (in.readInt() != REPLY_MAGIC) {
            throw new IOException("bad reply magic");
        }
        int error = in.readInt();
        if (in.readLong() != handles) {
            throw new IOException("reply to another request");
        }
        if (error != 0) {
            throw new IOException("NBD error " + error);
        }
        if (data != null) {
            in.readFully(data);
        }
    }

    @Override
    public void close() {
        try {
            request(DISCONNECT, 0, 0, null);
        } catch (IOException ignored) {
            // the server is gone already
        }
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
