package dev.strata.nbd.internal.session;

/**
 * The outcome of a successful negotiation: the export chosen and what was agreed for the
 * transmission phase.
 *
 * @param export             the export
 * @param structuredReplies  NBD_OPT_STRUCTURED_REPLY was acknowledged
 * @param baseAllocation     {@code base:allocation} was selected for this export (context id {@link ServerHandshake#BASE_ALLOCATION_ID})
 * @param transmissionFlags  the flags sent to the client
 */
public record Negotiated(ExportView export, boolean structuredReplies, boolean baseAllocation, int transmissionFlags) {
}
