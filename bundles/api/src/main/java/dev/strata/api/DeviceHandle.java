package dev.strata.api;

/**
 * A mapped device opened by a user of the {@link DeviceManager}. Closing the handle releases the
 * use; it does not close the device.
 */
public interface DeviceHandle extends BlockDevice {

    /** The device's name. */
    String name();
}
