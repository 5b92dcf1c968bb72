import Foundation

// A string kernel's constant: its UTF-8 bytes, copied once into memory of their own so that
// the per-row tests compare raw bytes with `memcmp`, without touching the String.
//
// Invariants:
// - The owning `QueryKernel` holds the only needle value: it is allocated by
//   `init(copying:)` when the kernel is made and freed once, by the kernel's `deinit`.
// - The allocation has at least one byte, so `base` is non-nil even for an empty needle.
// - Each test is given the bytes of a row of a chunk the caller holds, valid for the call.

/// The bytes a string kernel compares rows with, owned by one `QueryKernel`.
struct UnsafeNeedle {
    private let buffer: UnsafeMutableRawBufferPointer

    /// Copies `string`'s UTF-8 bytes.
    init(copying string: inout String) {
        buffer = string.withUTF8 { utf8 in
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(utf8.count, 1), alignment: 1)
            if utf8.count > 0 { copy.copyMemory(from: UnsafeRawBufferPointer(utf8)) }
            return UnsafeMutableRawBufferPointer(rebasing: copy[0..<utf8.count])
        }
    }

    /// Frees the bytes; called once, by the owning kernel's `deinit`.
    func deallocate() { buffer.deallocate() }

    /// The needle's length in bytes.
    var count: Int { @inline(__always) get { buffer.count } }

    /// Whether `bytes` are the needle.
    @inline(__always)
    func isEqual(to bytes: UnsafeRawBufferPointer) -> Bool {
        let n = buffer.count
        return bytes.count == n && (n == 0 || memcmp(bytes.baseAddress!, buffer.baseAddress!, n) == 0)
    }

    /// Whether `bytes` begin with the needle.
    @inline(__always)
    func isPrefix(of bytes: UnsafeRawBufferPointer) -> Bool {
        let n = buffer.count
        return bytes.count >= n && (n == 0 || memcmp(bytes.baseAddress!, buffer.baseAddress!, n) == 0)
    }

    /// Whether `bytes` end with the needle.
    @inline(__always)
    func isSuffix(of bytes: UnsafeRawBufferPointer) -> Bool {
        let n = buffer.count
        return bytes.count >= n && (n == 0 || memcmp(bytes.baseAddress! + (bytes.count - n), buffer.baseAddress!, n) == 0)
    }

    /// Whether `bytes` contain the needle, which is not empty (the caller answers that case).
    @inline(__always)
    func isContained(in bytes: UnsafeRawBufferPointer) -> Bool {
        let n = buffer.count
        return bytes.count >= n && QueryValueComparison.containsBytes(bytes.baseAddress!, bytes.count, buffer.baseAddress!, n)
    }
}
