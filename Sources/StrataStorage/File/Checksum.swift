import CStrataSystem

/// CRC32C (Castagnoli), computed with the CPU's instruction where there is one.
func crc32c(_ bytes: UnsafeRawPointer, count: Int, seed: UInt32 = 0) -> UInt32 {
    strata_crc32c(seed, bytes, count)
}
