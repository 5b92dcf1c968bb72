// Unsafe: the engine's one door for reading and writing fixed-width integers at a byte offset
// in raw memory (page images, the mapping, commit-log records, the lock file's shared header).
//
// Invariants callers rely on:
// - `offset + width` lies inside the memory the pointer or buffer addresses. The buffer forms
//   `assert` this in debug builds; the pointer forms cannot, so their callers bound the offset
//   themselves (a page view's offsets lie inside its page, which `Snapshot.verify` checks
//   before a page is used; an image's offsets lie inside the page-sized buffer it was
//   allocated as).
// - The memory is valid and not freed for the duration of the call: a mapped page stays mapped
//   while the snapshot reading it is pinned, an arena or node buffer lives as long as its
//   owner, a scratch image lives until its owner's `deallocate`.
// - No alignment is assumed: loads are unaligned, stores go through `storeBytes`, which writes
//   any alignment for trivial types.
// - Byte order is the host's, exactly as `loadUnaligned`/`storeBytes` give it. The file format
//   is little-endian: some callers convert at the call site (`UInt32(littleEndian:)`,
//   `.littleEndian`), and the fields accessed without a conversion rely on the host being
//   little-endian, as the platforms the engine builds for (x86-64, arm64) are.
//
// Each helper is `@inline(__always)` and forwards to the standard library's primitive, so the
// generated code is that of the direct call.

extension UnsafeRawPointer {
    /// The `UInt8` at byte `offset`, in host byte order.
    @inline(__always)
    func uint8(at offset: Int) -> UInt8 {
        return load(fromByteOffset: offset, as: UInt8.self)
    }

    /// The `UInt16` at byte `offset`, in host byte order.
    @inline(__always)
    func uint16(at offset: Int) -> UInt16 {
        return loadUnaligned(fromByteOffset: offset, as: UInt16.self)
    }

    /// The `UInt32` at byte `offset`, in host byte order.
    @inline(__always)
    func uint32(at offset: Int) -> UInt32 {
        return loadUnaligned(fromByteOffset: offset, as: UInt32.self)
    }

    /// The `UInt64` at byte `offset`, in host byte order.
    @inline(__always)
    func uint64(at offset: Int) -> UInt64 {
        return loadUnaligned(fromByteOffset: offset, as: UInt64.self)
    }
}

extension UnsafeMutableRawPointer {
    /// The `UInt8` at byte `offset`, in host byte order.
    @inline(__always)
    func uint8(at offset: Int) -> UInt8 {
        return load(fromByteOffset: offset, as: UInt8.self)
    }

    /// The `UInt16` at byte `offset`, in host byte order.
    @inline(__always)
    func uint16(at offset: Int) -> UInt16 {
        return loadUnaligned(fromByteOffset: offset, as: UInt16.self)
    }

    /// The `UInt32` at byte `offset`, in host byte order.
    @inline(__always)
    func uint32(at offset: Int) -> UInt32 {
        return loadUnaligned(fromByteOffset: offset, as: UInt32.self)
    }

    /// The `UInt64` at byte `offset`, in host byte order.
    @inline(__always)
    func uint64(at offset: Int) -> UInt64 {
        return loadUnaligned(fromByteOffset: offset, as: UInt64.self)
    }

    /// Writes `value` at byte `offset`, in host byte order.
    @inline(__always)
    func setUInt8(_ value: UInt8, at offset: Int) {
        storeBytes(of: value, toByteOffset: offset, as: UInt8.self)
    }

    /// Writes `value` at byte `offset`, in host byte order.
    @inline(__always)
    func setUInt16(_ value: UInt16, at offset: Int) {
        storeBytes(of: value, toByteOffset: offset, as: UInt16.self)
    }

    /// Writes `value` at byte `offset`, in host byte order.
    @inline(__always)
    func setUInt32(_ value: UInt32, at offset: Int) {
        storeBytes(of: value, toByteOffset: offset, as: UInt32.self)
    }

    /// Writes `value` at byte `offset`, in host byte order.
    @inline(__always)
    func setUInt64(_ value: UInt64, at offset: Int) {
        storeBytes(of: value, toByteOffset: offset, as: UInt64.self)
    }
}

extension UnsafeRawBufferPointer {
    /// The `UInt8` at byte `offset`, in host byte order.
    @inline(__always)
    func uint8(at offset: Int) -> UInt8 {
        assert(offset >= 0 && offset + MemoryLayout<UInt8>.size <= count, "UInt8 read out of bounds")
        return load(fromByteOffset: offset, as: UInt8.self)
    }

    /// The `UInt16` at byte `offset`, in host byte order.
    @inline(__always)
    func uint16(at offset: Int) -> UInt16 {
        assert(offset >= 0 && offset + MemoryLayout<UInt16>.size <= count, "UInt16 read out of bounds")
        return loadUnaligned(fromByteOffset: offset, as: UInt16.self)
    }

    /// The `UInt32` at byte `offset`, in host byte order.
    @inline(__always)
    func uint32(at offset: Int) -> UInt32 {
        assert(offset >= 0 && offset + MemoryLayout<UInt32>.size <= count, "UInt32 read out of bounds")
        return loadUnaligned(fromByteOffset: offset, as: UInt32.self)
    }

    /// The `UInt64` at byte `offset`, in host byte order.
    @inline(__always)
    func uint64(at offset: Int) -> UInt64 {
        assert(offset >= 0 && offset + MemoryLayout<UInt64>.size <= count, "UInt64 read out of bounds")
        return loadUnaligned(fromByteOffset: offset, as: UInt64.self)
    }
}

extension UnsafeMutableRawBufferPointer {
    /// The `UInt8` at byte `offset`, in host byte order.
    @inline(__always)
    func uint8(at offset: Int) -> UInt8 {
        assert(offset >= 0 && offset + MemoryLayout<UInt8>.size <= count, "UInt8 read out of bounds")
        return load(fromByteOffset: offset, as: UInt8.self)
    }

    /// The `UInt16` at byte `offset`, in host byte order.
    @inline(__always)
    func uint16(at offset: Int) -> UInt16 {
        assert(offset >= 0 && offset + MemoryLayout<UInt16>.size <= count, "UInt16 read out of bounds")
        return loadUnaligned(fromByteOffset: offset, as: UInt16.self)
    }

    /// The `UInt32` at byte `offset`, in host byte order.
    @inline(__always)
    func uint32(at offset: Int) -> UInt32 {
        assert(offset >= 0 && offset + MemoryLayout<UInt32>.size <= count, "UInt32 read out of bounds")
        return loadUnaligned(fromByteOffset: offset, as: UInt32.self)
    }

    /// The `UInt64` at byte `offset`, in host byte order.
    @inline(__always)
    func uint64(at offset: Int) -> UInt64 {
        assert(offset >= 0 && offset + MemoryLayout<UInt64>.size <= count, "UInt64 read out of bounds")
        return loadUnaligned(fromByteOffset: offset, as: UInt64.self)
    }

    /// Writes `value` at byte `offset`, in host byte order.
    @inline(__always)
    func setUInt8(_ value: UInt8, at offset: Int) {
        assert(offset >= 0 && offset + MemoryLayout<UInt8>.size <= count, "UInt8 write out of bounds")
        storeBytes(of: value, toByteOffset: offset, as: UInt8.self)
    }

    /// Writes `value` at byte `offset`, in host byte order.
    @inline(__always)
    func setUInt16(_ value: UInt16, at offset: Int) {
        assert(offset >= 0 && offset + MemoryLayout<UInt16>.size <= count, "UInt16 write out of bounds")
        storeBytes(of: value, toByteOffset: offset, as: UInt16.self)
    }

    /// Writes `value` at byte `offset`, in host byte order.
    @inline(__always)
    func setUInt32(_ value: UInt32, at offset: Int) {
        assert(offset >= 0 && offset + MemoryLayout<UInt32>.size <= count, "UInt32 write out of bounds")
        storeBytes(of: value, toByteOffset: offset, as: UInt32.self)
    }

    /// Writes `value` at byte `offset`, in host byte order.
    @inline(__always)
    func setUInt64(_ value: UInt64, at offset: Int) {
        assert(offset >= 0 && offset + MemoryLayout<UInt64>.size <= count, "UInt64 write out of bounds")
        storeBytes(of: value, toByteOffset: offset, as: UInt64.self)
    }
}
