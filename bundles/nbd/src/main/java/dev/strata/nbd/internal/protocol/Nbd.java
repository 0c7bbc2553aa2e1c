package dev.strata.nbd.internal.protocol;

/**
 * Constants of the NBD protocol (fixed-newstyle negotiation, simple and structured replies).
 * Every value is sent in network byte order.
 */
public final class Nbd {
    private Nbd() {
    }

    /** First 8 bytes the server sends ("NBDMAGIC"). */
    public static final long NBDMAGIC = 0x4e42444d41474943L;
    /** Newstyle negotiation magic ("IHAVEOPT"), also the prefix of each option request. */
    public static final long IHAVEOPT = 0x49484156454f5054L;
    /** Magic of every option reply. */
    public static final long OPTION_REPLY_MAGIC = 0x0003e889045565a9L;
    public static final int REQUEST_MAGIC = 0x25609513;
    public static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    public static final int STRUCTURED_REPLY_MAGIC = 0x668e33ef;

    // handshake flags (server) and client flags
    public static final int FLAG_FIXED_NEWSTYLE = 1;
    public static final int FLAG_NO_ZEROES = 1 << 1;
    public static final int FLAG_C_FIXED_NEWSTYLE = 1;
    public static final int FLAG_C_NO_ZEROES = 1 << 1;
    public static final int KNOWN_CLIENT_FLAGS = FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES;

    // options
    public static final int OPT_EXPORT_NAME = 1;
    public static final int OPT_ABORT = 2;
    public static final int OPT_LIST = 3;
    public static final int OPT_STARTTLS = 5;
    public static final int OPT_INFO = 6;
    public static final int OPT_GO = 7;
    public static final int OPT_STRUCTURED_REPLY = 8;
    public static final int OPT_LIST_META_CONTEXT = 9;
    public static final int OPT_SET_META_CONTEXT = 10;

    // option replies
    public static final int REP_ACK = 1;
    public static final int REP_SERVER = 2;
    public static final int REP_INFO = 3;
    public static final int REP_META_CONTEXT = 4;
    public static final int REP_ERR_UNSUP = 0x80000000 | 1;
    public static final int REP_ERR_POLICY = 0x80000000 | 2;
    public static final int REP_ERR_INVALID = 0x80000000 | 3;
    public static final int REP_ERR_PLATFORM = 0x80000000 | 4;
    public static final int REP_ERR_TLS_REQD = 0x80000000 | 5;
    public static final int REP_ERR_UNKNOWN = 0x80000000 | 6;
    public static final int REP_ERR_SHUTDOWN = 0x80000000 | 7;
    public static final int REP_ERR_BLOCK_SIZE_REQD = 0x80000000 | 8;
    public static final int REP_ERR_TOO_BIG = 0x80000000 | 9;

    // NBD_REP_INFO types
    public static final int INFO_EXPORT = 0;
    public static final int INFO_NAME = 1;
    public static final int INFO_DESCRIPTION = 2;
    public static final int INFO_BLOCK_SIZE = 3;

    // transmission flags
    public static final int FLAG_HAS_FLAGS = 1;
    public static final int FLAG_READ_ONLY = 1 << 1;
    public static final int FLAG_SEND_FLUSH = 1 << 2;
    public static final int FLAG_SEND_FUA = 1 << 3;
    public static final int FLAG_ROTATIONAL = 1 << 4;
    public static final int FLAG_SEND_TRIM = 1 << 5;
    public static final int FLAG_SEND_WRITE_ZEROES = 1 << 6;
    public static final int FLAG_SEND_DF = 1 << 7;
    public static final int FLAG_CAN_MULTI_CONN = 1 << 8;
    public static final int FLAG_SEND_RESIZE = 1 << 9;
    public static final int FLAG_SEND_CACHE = 1 << 10;
    public static final int FLAG_SEND_FAST_ZERO = 1 << 11;

    // commands
    public static final int CMD_READ = 0;
    public static final int CMD_WRITE = 1;
    public static final int CMD_DISC = 2;
    public static final int CMD_FLUSH = 3;
    public static final int CMD_TRIM = 4;
    public static final int CMD_CACHE = 5;
    public static final int CMD_WRITE_ZEROES = 6;
    public static final int CMD_BLOCK_STATUS = 7;

    // command flags
    public static final int CMD_FLAG_FUA = 1;
    public static final int CMD_FLAG_NO_HOLE = 1 << 1;
    public static final int CMD_FLAG_DF = 1 << 2;
    public static final int CMD_FLAG_REQ_ONE = 1 << 3;
    public static final int CMD_FLAG_FAST_ZERO = 1 << 4;

    // structured replies
    public static final int REPLY_FLAG_DONE = 1;
    public static final int REPLY_TYPE_NONE = 0;
    public static final int REPLY_TYPE_OFFSET_DATA = 1;
    public static final int REPLY_TYPE_OFFSET_HOLE = 2;
    public static final int REPLY_TYPE_BLOCK_STATUS = 5;
    public static final int REPLY_TYPE_ERROR = (1 << 15) | 1;
    public static final int REPLY_TYPE_ERROR_OFFSET = (1 << 15) | 2;

    // base:allocation
    public static final String BASE_ALLOCATION = "base:allocation";
    public static final int STATE_HOLE = 1;
    public static final int STATE_ZERO = 2;

    // errno values on the wire
    public static final int EPERM = 1;
    public static final int EIO = 5;
    public static final int ENOMEM = 12;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int EOVERFLOW = 75;
    public static final int ENOTSUP = 95;
    public static final int ESHUTDOWN = 108;

    // sizes
    public static final int REQUEST_HEADER_SIZE = 28;
    public static final int SIMPLE_REPLY_HEADER_SIZE = 16;
    public static final int STRUCTURED_REPLY_HEADER_SIZE = 20;
    public static final int OPTION_HEADER_SIZE = 16;
    public static final int OPTION_REPLY_HEADER_SIZE = 20;
    /** Block sizes we advertise with NBD_INFO_BLOCK_SIZE. */
    public static final int MIN_BLOCK = 512;
    public static final int PREFERRED_BLOCK = 4096;
    public static final int MAX_BLOCK = 32 << 20;
    /** Longest string the protocol allows (export names, queries). */
    public static final int MAX_STRING = 4096;

    public static String commandName(int type) {
        switch (type) {
            case CMD_READ: return "READ";
            case CMD_WRITE: return "WRITE";
            case CMD_DISC: return "DISC";
            case CMD_FLUSH: return "FLUSH";
            case CMD_TRIM: return "TRIM";
            case CMD_CACHE: return "CACHE";
            case CMD_WRITE_ZEROES: return "WRITE_ZEROES";
            case CMD_BLOCK_STATUS: return "BLOCK_STATUS";
            default: return "CMD_" + type;
        }
    }

    public static String optionName(int option) {
        switch (option) {
            case OPT_EXPORT_NAME: return "EXPORT_NAME";
            case OPT_ABORT: return "ABORT";
            case OPT_LIST: return "LIST";
            case OPT_STARTTLS: return "STARTTLS";
            case OPT_INFO: return "INFO";
            case OPT_GO: return "GO";
            case OPT_STRUCTURED_REPLY: return "STRUCTURED_REPLY";
            case OPT_LIST_META_CONTEXT: return "LIST_META_CONTEXT";
            case OPT_SET_META_CONTEXT: return "SET_META_CONTEXT";
            default: return "OPT_" + option;
        }
    }

    public static String errnoName(int errno) {
        switch (errno) {
            case 0: return "OK";
            case EPERM: return "EPERM";
            case EIO: return "EIO";
            case ENOMEM: return "ENOMEM";
            case EINVAL: return "EINVAL";
            case ENOSPC: return "ENOSPC";
            case EOVERFLOW: return "EOVERFLOW";
            case ENOTSUP: return "ENOTSUP";
            case ESHUTDOWN: return "ESHUTDOWN";
            default: return "errno " + errno;
        }
    }
}
