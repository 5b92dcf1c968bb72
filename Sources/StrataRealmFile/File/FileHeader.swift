/// The 24-byte header at the start of every Realm file, and the top ref it selects.
///
/// Layout: two little-endian 64-bit top refs, the mark `T-DB`, two file-format bytes, a
/// reserved byte and a flags byte whose bit 0 selects which top ref and format byte are
/// current. A file written in streaming form (by `writeCopy` / compaction) has `0xFFFF…` in the
/// first top ref and keeps the real top ref in a 16-byte footer at the end of the file: the
/// top ref and then the cookie `0x3034125237E526C8`.
struct FileHeader: Sendable, Equatable {
    /// The file format of the current top ref.
    let fileFormat: Int
    /// The ref of the group's top array, or 0 for a file with no committed data.
    let topRef: Int
    /// Whether the top ref came from the streaming-form footer.
    let isStreamingForm: Bool

    static let size = 24
    static let streamingFooterCookie: UInt64 = 0x3034_1252_37E5_26C8
    /// The only file format this reader reads.
    static let supportedFileFormat = 24

    /// Reads and checks the header of `file`.
    init(file: FileMapping) throws {
        guard file.count >= FileHeader.size else {
            throw RealmFileError.notARealmFile(reason: "the file is \(file.count) bytes, shorter than Realm's 24-byte header")
        }
        let header = try file.bytes(at: 0, count: FileHeader.size)
        guard header[16] == 0x54, header[17] == 0x2D, header[18] == 0x44, header[19] == 0x42 else {
            throw RealmFileError.notARealmFile(reason: "the header lacks Realm's T-DB mark")
        }
        let select = Int(header[23] & 1)
        let format = Int(header[20 + select])
        guard format == FileHeader.supportedFileFormat else {
            throw RealmFileError.unsupportedFileFormat(version: format)
        }
        let firstRef = try file.loadUInt64(at: 0)
        var ref: UInt64
        var streaming = false
        if select == 0 && firstRef == UInt64.max {
            guard file.count >= FileHeader.size + 16 else {
                throw RealmFileError.corrupted(reason: "the file is in streaming form but too short for its footer")
            }
            let cookie = try file.loadUInt64(at: file.count - 8)
            guard cookie == FileHeader.streamingFooterCookie else {
                throw RealmFileError.corrupted(reason: "the file is in streaming form but its footer lacks Realm's cookie")
            }
            ref = try file.loadUInt64(at: file.count - 16)
            streaming = true
        } else {
            ref = try file.loadUInt64(at: 8 * select)
        }
        guard ref < UInt64(file.count), ref % 8 == 0, ref == 0 || ref >= UInt64(FileHeader.size) else {
            throw RealmFileError.corrupted(reason: "the top ref \(ref) does not point inside the \(file.count)-byte file")
        }
        fileFormat = format
        topRef = Int(ref)
        isStreamingForm = streaming
    }
}
