extension Checkpoint {
    /// The checksum a download frame's checkpoint carries: CRC-32C (Castagnoli, reflected
    /// polynomial `0x82F63B78`, initial value and final XOR `0xFFFFFFFF`) over the
    /// concatenated ``ServerChangeset/encoded()`` bytes of the frame's changesets, in order.
    /// No changesets give 0. Both sides compute it the same way because the encoding is
    /// deterministic; the receiver refuses a frame whose checksum differs.
    public static func checksum(of changesets: [ServerChangeset]) -> UInt32 {
        var crc = CRC32C()
        for changeset in changesets { crc.update(changeset.encoded()) }
        return crc.value
    }
}
