// Whether an object is referenced by exactly one strong reference and nothing else, so that
// the code holding that reference may reuse the object as if it had been freed and allocated
// again (Results iteration recycles accessors this way; see `Results.Iterator`).

import CStrataSystem

/// Reads a Swift object's inline reference count.
///
/// The Swift runtime keeps, in the word after the object's type pointer (64-bit platforms): bit 0
/// a flag, bits 1–31 the unowned count (1 while no `unowned` reference exists), bit 32 "is
/// deinitialising", bits 33–62 the strong count minus one, and bit 63 "uses a side table" — set
/// for good once any `weak` reference has been formed. An object is a *sole* reference when
/// that word says: one strong reference, no unowned one, never weakly referenced, not
/// deinitialising.
///
/// A reference held for a moment by the compiler only makes the answer "no" (no reuse), never
/// "yes" wrongly: counts only go up while someone else can reach the object. Because the layout
/// is the runtime's and not a promise of the language, `isSupported` checks once per process
/// that the word answers as described for a probe object with an extra strong reference, an
/// `unowned` reference and a `weak` one; where it does not, nothing is ever recycled.
enum SoleReference {
    /// Whether the word's layout behaved as expected in this process.
    static let isSupported: Bool = selfTest()

    /// Whether the object at `object` (from `Unmanaged.toOpaque()`, so that asking takes no
    /// reference of its own) is referenced once, strongly, by the caller and by nothing else.
    /// Only meaningful where `isSupported` is true, which the caller checks once (so the step
    /// that asks for every object does not go through the lazy static's initialisation check).
    @inline(__always)
    static func isSole(_ object: UnsafeMutableRawPointer) -> Bool {
        readsAsSole(UnsafeRawPointer(object))
    }

    @inline(__always)
    private static func readsAsSole(_ header: UnsafeRawPointer) -> Bool {
        let word = strata_load_word_relaxed(header + MemoryLayout<UInt>.size)
        // Everything but bit 0 must be "unowned count 1", which is bit 1 alone.
        return word & ~1 == 1 << 1
    }

    private final class Probe {}

    /// Holds a probe's extra references where the optimizer cannot see through: a value
    /// stored in a global escapes.
    private final class UnownedHolder {
        unowned let probe: Probe
        init(_ probe: Probe) { self.probe = probe }
    }

    private final class WeakHolder {
        weak var probe: Probe?
        init(_ probe: Probe) { self.probe = probe }
    }

    /// Written only by `selfTest`, which runs once.
    nonisolated(unsafe) private static var sink: AnyObject?

    @inline(never)
    private static func escape(_ object: AnyObject?) { sink = object }

    private static func selfTest() -> Bool {
        guard MemoryLayout<UInt>.size == 8 else { return false }
        // The probe is reached only through its address while the word is read, so no Swift
        // reference of the compiler's own is counted, in optimised and unoptimised builds
        // alike. (Runs once: `isSupported` is a lazily initialised static.)
        do {
            let probe = Unmanaged.passRetained(Probe())
            defer { probe.release() }
            let address = UnsafeRawPointer(probe.toOpaque())
            guard readsAsSole(address) else { return false }
            // A second strong reference.
            _ = probe.retain()
            let withTwo = readsAsSole(address)
            probe.release()
            guard !withTwo, readsAsSole(address) else { return false }
            // An unowned reference, held by an object that escapes.
            escape(UnownedHolder(probe.takeUnretainedValue()))
            let withUnowned = readsAsSole(address)
            escape(nil)
            guard !withUnowned, readsAsSole(address) else { return false }
            // A weak reference gives the object a side table for the rest of its life.
            escape(WeakHolder(probe.takeUnretainedValue()))
            let withWeak = readsAsSole(address)
            escape(nil)
            return !withWeak && !readsAsSole(address)
        }
    }
}
