package dev.strata.api;

/** A request whose offset or length is not a multiple of 512; nothing was read or written. */
public class MisalignedRequestException extends InvalidRequestException {
    private static final long serialVersionUID = 1L;

    public MisalignedRequestException(long offset, long length) {
        super("request [" + offset + ", +" + length + ") is not aligned to " + BlockDevice.SECTOR + " bytes");
    }
}
