// The floor of the object scan (workload 4): what any Swift store that hands out `String`s
// must spend per object, with no database at all.

/// The dataset's names packed into one buffer (as a columnar store keeps them: offsets and
/// lengths beside one byte area), ages and scores in plain arrays. `measure` visits every
/// object as the engines' scans do: it builds the name as a `String` from its bytes (the way
/// Strata does, which is also what `String(decoding:as:)` costs) and adds the name's length and
/// first byte, the age and the score to the same sums. A store that returns names as `String`
/// can spend less than this on the rest of its work, but not less in total; so a scan target
/// below this floor cannot be met by any engine of the table.
struct ScanFloor {
    private let bytes: [UInt8]
    private let offsets: [Int]
    private let lengths: [Int]
    private let ages: [Int]
    private let scores: [Double]

    init(_ data: ObjectDataset) {
        var bytes: [UInt8] = []
        var offsets: [Int] = [], lengths: [Int] = [], ages: [Int] = [], scores: [Double] = []
        for person in data.people {
            offsets.append(bytes.count)
            lengths.append(person.name.utf8.count)
            bytes.append(contentsOf: person.name.utf8)
            ages.append(person.age)
            scores.append(person.score)
        }
        self.bytes = bytes
        self.offsets = offsets
        self.lengths = lengths
        self.ages = ages
        self.scores = scores
    }

    /// One scan; returns the sums it read.
    func scan() -> ObjectScanSums {
        var sums = ObjectScanSums()
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            for i in offsets.indices {
                let start = base + offsets[i], length = lengths[i]
                let name = String(unsafeUninitializedCapacity: length) { buffer in
                    guard length > 0, let target = buffer.baseAddress else { return 0 }
                    target.update(from: start.assumingMemoryBound(to: UInt8.self), count: length)
                    return length
                }
                sums.add(name: name, age: ages[i], score: scores[i])
            }
        }
        return sums
    }
}

/// The `scan` workload for the `floor` engine: ns per object of `ScanFloor.scan`, after one
/// untimed warm-up scan, as for the engines.
func measureScanFloor(_ data: ObjectDataset) throws -> Double {
    let floor = ScanFloor(data)
    _ = floor.scan()
    let start = monotonicNanos()
    let sums = floor.scan()
    let elapsed = monotonicNanos() - start
    guard sums == data.expectedScan else { throw BenchError("floor: scan read wrong values") }
    return Double(elapsed) / Double(max(data.people.count, 1))
}
