/// Why a Realm file could not be read.
///
/// The reader never traps on what a file contains: every ref, size and type code read from the
/// file is checked first, and anything that does not fit the format is one of these errors.
public enum RealmFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be opened or mapped (missing, unreadable, a directory…).
    case cannotOpen(path: String, reason: String)
    /// The file is not a Realm file: too small for a header, or the header lacks Realm's
    /// `T-DB` mark. An encrypted Realm file looks like this too when no key is given.
    case notARealmFile(reason: String)
    /// The file is a Realm file in a file format this reader does not read.
    case unsupportedFileFormat(version: Int)
    /// The file claims to be a Realm file but its contents break the format: a ref outside
    /// the file, a node that does not fit, a cycle, a size that cannot be right.
    case corrupted(reason: String)
    /// The file uses a part of the format this reader does not read yet.
    case unsupportedFeature(String)
    /// No class of this name is stored in the file.
    case noSuchClass(String)
    /// The encryption key is not 64 bytes long, the size Realm's keys have.
    case invalidEncryptionKey(length: Int)
    /// The file's first encrypted page does not authenticate under the key given: the key is
    /// not the one the file was written with (or the file is not encrypted).
    case wrongEncryptionKey
    /// A 4 KiB block of an encrypted file, beginning `fileOffset` bytes into the file, fails
    /// its authentication code (HMAC-SHA224): it was changed or damaged after Realm wrote it.
    /// (A damaged first block reads as ``wrongEncryptionKey``: the two cannot be told apart.)
    case damagedEncryptedBlock(fileOffset: Int)

    /// What went wrong and, where there is one, what to do about it.
    public var description: String {
        switch self {
        case let .cannotOpen(path, reason):
            return "cannot open the Realm file at \(path): \(reason)"
        case let .notARealmFile(reason):
            return "not a Realm file (\(reason)); if the file is encrypted, give its 64-byte key"
        case let .unsupportedFileFormat(version):
            return "the Realm file has file format \(version); this reader reads format 24 (Realm Core 14, "
                + "RealmSwift 10.4x and later). Open the file once with an app built on RealmSwift 10.49 or "
                + "later, which upgrades it to format 24, then import it"
        case let .corrupted(reason):
            return "the Realm file is damaged: \(reason)"
        case let .unsupportedFeature(feature):
            return "the Realm file uses a feature this reader does not read yet: \(feature)"
        case let .noSuchClass(name):
            return "the Realm file has no class named \(name)"
        case let .invalidEncryptionKey(length):
            return "a Realm encryption key is 64 bytes, and this one is \(length)"
        case let .damagedEncryptedBlock(fileOffset):
            return "the encrypted Realm file is damaged: its 4 KiB block at byte \(fileOffset) fails its authentication code "
                + "(it was changed after Realm wrote it); restore the file from a backup"
        case .wrongEncryptionKey:
            return "the Realm file cannot be decrypted with this key: it is not the key the file was written with, or the file is not encrypted"
        }
    }
}
