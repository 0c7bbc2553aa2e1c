package dev.strata.cache.commands.internal;

import java.io.IOException;
import java.util.Map;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.cache.writeboost.internal.WriteboostFactory;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;

/**
 * The two cache policies the commands are tested on: writeboost (built through its factory, as
 * the manager builds it) and {@link MemCache}, which shares nothing with it but the cache API.
 */
enum Subject {
    WRITEBOOST("writeboost", "backing", CacheMode.WRITEAROUND, null, "writeback_threshold", "50", "101") {
        @Override
        CacheTarget open(BlockDevice slow) throws IOException {
            // writeback_threshold=0: no background writeback, so data stays dirty until asked;
            // one segment per writeback batch, so a writeback makes visible progress in steps
            return (CacheTarget) new WriteboostFactory().create(SimpleTargetContext
                    .of("wb", "backing=slow cache=fast writeback_threshold=0 nr_max_batched_writeback=1")
                    .with("slow", slow).with("fast", new CrashableDevice("fast", 17L << 20, 4096)));
        }

        @Override
        Map<String, String> arguments() {
            return Map.of("backing", "slow", "cache", "fast", "writeback_threshold", "0");
        }
    },
    MEMCACHE("memcache", "origin", CacheMode.WRITETHROUGH, CacheMode.WRITEAROUND, "writeback_percent", "50", "101") {
        @Override
        CacheTarget open(BlockDevice slow) {
            return new MemCache("wb", slow, 4096);
        }

        @Override
        Map<String, String> arguments() {
            return Map.of("origin", "slow");
        }
    };

    final String type;
    /** The argument naming the authoritative device. */
    final String lowerArgument;
    /** The mode a detach must choose. */
    final CacheMode cleanMode;
    /** A mode this policy does not support (null: it supports every mode). */
    final CacheMode unsupported;
    final String tunable;
    final String goodValue;
    final String badValue;

    Subject(String type, String lowerArgument, CacheMode cleanMode, CacheMode unsupported, String tunable,
            String goodValue, String badValue) {
        this.type = type;
        this.lowerArgument = lowerArgument;
        this.cleanMode = cleanMode;
        this.unsupported = unsupported;
        this.tunable = tunable;
        this.goodValue = goodValue;
        this.badValue = badValue;
    }

    /** A cache named {@code wb} over {@code slow}. */
    abstract CacheTarget open(BlockDevice slow) throws IOException;

    /** Its device definition's arguments. */
    abstract Map<String, String> arguments();
}
