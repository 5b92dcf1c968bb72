// The Strata engine. Build with `-Xswiftc -DNO_STRATA` to leave it out (peers and floor only),
// e.g. while the StrataStorage API is not available.
#if !NO_STRATA
import StrataStorage

/// Strata's storage engine: one database file with one tree named "kv", opened with full
/// durability (every commit waits for the disk).
final class StrataEngine: KVEngine {
    static let name = "strata"

    private let engine: StorageEngine

    init(directory: String) throws {
        engine = try StorageEngine.open(path: directory + "/kv.strata", options: StorageOptions(durability: .full))
    }

    func close() { engine.close() }

    func putAll(_ data: Dataset, count: Int) throws {
        try engine.write { txn in
            let tree = try txn.createTree(named: "kv")
            for i in 0..<count {
                try txn.put(
                    UnsafeRawBufferPointer(start: data.value(i), count: valueSize),
                    forKey: UnsafeRawBufferPointer(start: data.key(i), count: keySize),
                    in: tree)
            }
        }
    }

    func putEach(_ data: Dataset, range: Range<Int>) throws {
        for i in range {
            try engine.write { txn in
                let tree = try txn.createTree(named: "kv")
                try txn.put(
                    UnsafeRawBufferPointer(start: data.value(i), count: valueSize),
                    forKey: UnsafeRawBufferPointer(start: data.key(i), count: keySize),
                    in: tree)
            }
        }
    }

    func randomGets(_ data: Dataset) throws -> UInt64 {
        try engine.read { txn in
            guard let tree = try txn.tree(named: "kv") else { throw BenchError("strata: no tree") }
            var sum: UInt64 = 0
            for j in 0..<data.getCount {
                let key = UnsafeRawBufferPointer(start: data.key(Int(data.getOrder[j])), count: keySize)
                let first: UInt8? = try txn.withValue(forKey: key, in: tree) { value in value?.first }
                guard let first else { throw BenchError("strata: key not found") }
                sum &+= UInt64(first)
            }
            return sum
        }
    }

    func scan() throws -> (count: Int, checksum: UInt64) {
        try engine.read { txn in
            guard let tree = try txn.tree(named: "kv") else { throw BenchError("strata: no tree") }
            let cursor = try txn.makeCursor(on: tree)
            var tally = ScanTally()
            var more = try cursor.first()
            while more {
                let key = cursor.key, value = cursor.value
                guard key.count == keySize, value.count == valueSize, let k = key.baseAddress, let v = value.baseAddress
                else { throw BenchError("strata: bad sizes") }
                tally.add(key: k, value: v)
                more = try cursor.next()
            }
            return try tally.result(Self.name)
        }
    }
}
#endif
