package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;

import java.io.IOException;

/**
 * A write, write-zeroes, discard or flush as issued to the device under test, and what it does
 * to the models once acknowledged. Shared by the crash model and crash replay so both drive a
 * target and account for it the same way.
 *
 * @param firstSector the first sector the op changes (0 for a flush)
 * @param tokens      the sector tokens it leaves ({@code 0} = zeroes; null for a flush)
 */
record IssuedOp(CrashOp op, int firstSector, long[] tokens) {

    /**
     * The write, write-zeroes, discard or flush {@code op} with the sectors it will change (known
     * before it is issued, so a power cut during it knows what was in flight); null for any other
     * op. {@code writeId} names a write's data.
     */
    static IssuedOp of(CrashOp op, Workload workload, long writeId) {
        int spu = workload.sectorsPerUnit();
        if (op instanceof CrashOp.Write w) {
            return new IssuedOp(op, w.unit() * spu, Patterns.tokens(writeId, w.unit() * spu, w.count() * spu));
        } else if (op instanceof CrashOp.Zero z) {
            return new IssuedOp(op, z.unit() * spu, new long[z.count() * spu]);
        } else if (op instanceof CrashOp.Discard d) {
            return new IssuedOp(op, d.unit() * spu, new long[d.count() * spu]);
        } else if (op instanceof CrashOp.Flush) {
            return new IssuedOp(op, 0, null);
        }
        return null;
    }

    /** Issues the op to {@code target}. */
    void issueTo(BlockDevice target, Workload workload) throws IOException {
        long unit = workload.unitSize();
        if (op instanceof CrashOp.Write w) {
            target.write(w.unit() * unit, Patterns.buffer(tokens), w.fua() ? BlockDevice.FUA : 0);
        } else if (op instanceof CrashOp.Zero z) {
            target.writeZeroes(z.unit() * unit, z.count() * unit, z.fua() ? BlockDevice.FUA : 0);
        } else if (op instanceof CrashOp.Discard d) {
            target.discard(d.unit() * unit, d.count() * unit);
        } else {
            target.flush();
        }
    }

    /** Accounts for an acknowledged op in the models ({@code logModel} may be null). */
    void acknowledge(ReferenceModel model, LogModel logModel) {
        acknowledge(op, firstSector, tokens, model, logModel);
    }

    /** As {@link #acknowledge(ReferenceModel, LogModel)}; a restart counts as a flush, other ops as nothing. */
    static void acknowledge(CrashOp op, int first, long[] tokens, ReferenceModel model, LogModel logModel) {
        if (op instanceof CrashOp.Write w) {
            model.write(first, tokens, w.fua());
            if (logModel != null) {
                logModel.write(first, tokens, w.fua());
            }
        } else if (op instanceof CrashOp.Zero z) {
            model.zero(first, tokens.length, z.fua());
            if (logModel != null) {
                logModel.zero(first, tokens.length, z.fua());
            }
        } else if (op instanceof CrashOp.Discard) {
            model.discard(first, tokens.length);
            if (logModel != null) {
                logModel.discard(first, tokens.length);
            }
        } else if (op instanceof CrashOp.Flush || op instanceof CrashOp.Restart) {
            model.flush();
            if (logModel != null) {
                logModel.flush();
            }
        }
    }
}
