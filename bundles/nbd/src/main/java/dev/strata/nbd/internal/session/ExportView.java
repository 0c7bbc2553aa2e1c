package dev.strata.nbd.internal.session;

/** What the negotiation needs to know about an export. */
public interface ExportView {
    String name();

    /** Free text shown by NBD_OPT_LIST and NBD_INFO_DESCRIPTION; may be empty. */
    String description();

    /** Size in bytes. */
    long size();

    boolean readOnly();
}
