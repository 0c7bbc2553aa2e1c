package dev.strata.nbd.internal.client;

import dev.strata.api.BlockDevice;
import dev.strata.nbd.internal.server.Export;
import dev.strata.nbd.internal.server.NbdServer;
import dev.strata.nbd.testing.MemoryDevice;
import dev.strata.testsupport.contract.BlockDeviceContract;
import java.net.InetSocketAddress;

/** The BlockDevice contract, run over the nbd target talking to our own server (two connections). */
class NbdTargetContractTest extends BlockDeviceContract {
    private NbdServer server;

    @Override
    protected BlockDevice newDevice(long size) throws Exception {
        server = new NbdServer();
        Export e = server.addExport("c", "", new MemoryDevice(size), new InetSocketAddress("127.0.0.1", 0), false);
        return new NbdTarget("remote", NbdUri.parse("nbd://127.0.0.1:" + e.port() + "/c"), 30_000, 2);
    }

    @Override
    protected void closeDevice(BlockDevice device) throws Exception {
        device.close();
        server.close();
    }
}
