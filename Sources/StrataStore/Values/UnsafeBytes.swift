// The object store's door to fixed-width integers in raw bytes: little-endian (the file's
// byte order for mixed values and change-log entries) and big-endian (index and tree keys,
// whose byte order is their sort order).
//
// Invariants each helper relies on, which its caller guarantees:
// - `offset ..< offset + MemoryLayout<T>.size` lies within the buffer (checked by `assert`,
//   so in debug builds only: these run once per value on per-row paths);
// - the buffer's memory is valid (and, for stores, writable) for the duration of the call.
// Loads and stores are unaligned, so any offset is fine; nothing is bound to a type.

/// Unaligned little- and big-endian loads and stores of integers at a byte offset, and
/// big-endian appends to a byte array.
enum UnsafeBytes {
    /// The little-endian `T` at `offset` in `bytes`.
    @inline(__always)
    static func loadLittleEndian<T: FixedWidthInteger>(_ type: T.Type, from bytes: UnsafeRawBufferPointer, at offset: Int = 0) -> T {
        assert(offset >= 0 && offset + MemoryLayout<T>.size <= bytes.count, "a load past the end of its buffer")
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// The big-endian `T` at `offset` in `bytes`.
    @inline(__always)
    static func loadBigEndian<T: FixedWidthInteger>(_ type: T.Type, from bytes: UnsafeRawBufferPointer, at offset: Int = 0) -> T {
        assert(offset >= 0 && offset + MemoryLayout<T>.size <= bytes.count, "a load past the end of its buffer")
        return T(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// Writes `value` little-endian at `offset` in `bytes`.
    @inline(__always)
    static func storeLittleEndian<T: FixedWidthInteger>(_ value: T, into bytes: UnsafeMutableRawBufferPointer, at offset: Int = 0) {
        assert(offset >= 0 && offset + MemoryLayout<T>.size <= bytes.count, "a store past the end of its buffer")
        bytes.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }

    /// Writes `value` big-endian at `offset` in `bytes`.
    @inline(__always)
    static func storeBigEndian<T: FixedWidthInteger>(_ value: T, into bytes: UnsafeMutableRawBufferPointer, at offset: Int = 0) {
        assert(offset >= 0 && offset + MemoryLayout<T>.size <= bytes.count, "a store past the end of its buffer")
        bytes.storeBytes(of: value.bigEndian, toByteOffset: offset, as: T.self)
    }

    /// Appends `value`'s bytes, big-endian, to `out`.
    @inline(__always)
    static func appendBigEndian<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }

    /// Appends the bytes of `value` as they lie in memory (a tuple of bytes, such as a UUID's,
    /// lies in its own order on every platform) to `out`.
    @inline(__always)
    static func appendMemory<T: BitwiseCopyable>(of value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value) { out.append(contentsOf: $0) }
    }
}
