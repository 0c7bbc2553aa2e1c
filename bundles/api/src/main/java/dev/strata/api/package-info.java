/**
 * Strata's contracts: {@link dev.strata.api.BlockDevice} (the disk semantics every target
 * keeps), {@link dev.strata.api.Target} and {@link dev.strata.api.TargetFactory} (how policy
 * bundles plug in), {@link dev.strata.api.DeviceManager} (mapped devices, used by the shell,
 * the NBD export and cache commands) and {@link dev.strata.api.WritebackController}.
 * Nothing but this package is imported across Strata bundles.
 */
@Export
@Version("1.10.0")
package dev.strata.api;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
