/// A read-only run of a Realm file's bytes, together with the object that keeps them in memory.
///
/// Invariants: `base` stays valid as long as `owner` is alive, and every read here holds
/// `owner` for its duration, so a `FileBytes` (or a ``Node`` holding one) can never read
/// memory that was freed or unmapped. For a plain file the owner is the ``FileMapping`` (the
/// bytes are in its mapping); for an encrypted file it is a buffer holding just these bytes,
/// decrypted (``EncryptedPages``), which goes when the last copy of the `FileBytes` goes.
/// Indexes are checked by the callers against `count` (the node decoders do), as with a
/// buffer pointer.
struct FileBytes {
    private let base: UnsafeRawBufferPointer
    private let owner: AnyObject

    init(_ base: UnsafeRawBufferPointer, owner: AnyObject) {
        self.base = base
        self.owner = owner
    }

    /// The number of bytes.
    var count: Int { base.count }

    /// The byte at `index`.
    subscript(index: Int) -> UInt8 {
        withExtendedLifetime(owner) { base[index] }
    }

    /// A copy of the bytes in `range`.
    subscript(range: Range<Int>) -> [UInt8] {
        withExtendedLifetime(owner) { Array(base[range]) }
    }

    /// A copy of all the bytes.
    var array: [UInt8] {
        withExtendedLifetime(owner) { Array(base) }
    }

    /// The bytes in `range` as a string, or nil if they are not valid UTF-8.
    func string(in range: Range<Int>) -> String? {
        withExtendedLifetime(owner) {
            String(validating: UnsafeRawBufferPointer(rebasing: base[range]).assumingMemoryBound(to: UInt8.self), as: UTF8.self)
        }
    }

    /// The value of type `T` stored (unaligned, in memory order) at `offset`.
    func loadUnaligned<T: BitwiseCopyable>(fromByteOffset offset: Int, as type: T.Type) -> T {
        withExtendedLifetime(owner) { base.loadUnaligned(fromByteOffset: offset, as: type) }
    }
}

/// Memory allocated for bytes copied out of a file (the decrypted bytes of an encrypted file's
/// node), freed with the last ``FileBytes`` that refers to it.
final class OwnedBytes {
    let buffer: UnsafeMutableRawBufferPointer

    init(count: Int) {
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 8)
    }

    deinit { buffer.deallocate() }
}
