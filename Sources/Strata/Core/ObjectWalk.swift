import StrataStore

/// The steps of one iteration over a table's objects: every object, cluster by cluster, or the
/// objects of a list of keys. The last object handed out is kept as a *spare*; when the caller
/// kept no reference to it (`SoleReference`), the next step reuses it, indistinguishable from a
/// new object at the same address, which saves allocating, initialising and freeing one per
/// step. Only for classes whose stored properties are all `@Persisted`
/// (`ClassInfo.isRecyclable`) and live instances (a frozen instance's objects may be read from
/// several threads at once).
final class ObjectWalk {
    /// The iterator holds the walk and the walk its context; `current` is one of `clusters`.
    private let context: TableContext
    private let keys: [ObjectKey]
    private let clusters: [ClusterView]
    private var position = 0
    private var clusterIndex = 0
    /// `clusters[clusterIndex]` and its count while objects remain in it.
    private var current: Unmanaged<ClusterView>?
    private var currentCount = 0
    private let recycles: Bool
    private var spare: Unmanaged<Object>?

    init(context: TableContext, keys: [ObjectKey], clusters: [ClusterView]) {
        self.context = context
        self.keys = keys
        self.clusters = clusters
        recycles = context.info.isRecyclable && context.frozenLock == nil && SoleReference.isSupported
    }

    deinit { spare?.release() }

    /// A walk at the same place, for a copy of the iterator (without the spare, which stays
    /// with this one).
    func copy() -> ObjectWalk {
        let copy = ObjectWalk(context: context, keys: keys, clusters: clusters)
        copy.position = position
        copy.clusterIndex = clusterIndex
        copy.current = current
        copy.currentCount = currentCount
        return copy
    }

    func next() -> Object? {
        if position < currentCount, let current {
            let row = position
            position &+= 1
            return current._withUnsafeGuaranteedRef { object(key: $0.key(at: row), cluster: $0, row: row) }
        }
        if !clusters.isEmpty { return nextCluster() }
        guard position < keys.count else { return nil }
        defer { position += 1 }
        return object(key: keys[position], cluster: nil, row: 0)
    }

    /// Moves to the next cluster holding objects and returns its first.
    private func nextCluster() -> Object? {
        if current != nil {
            clusterIndex += 1
            position = 0
        }
        while clusterIndex < clusters.count {
            let cluster = clusters[clusterIndex]
            if position < cluster.count {
                current = Unmanaged.passUnretained(cluster)
                currentCount = cluster.count
                defer { position += 1 }
                return object(key: cluster.key(at: position), cluster: cluster, row: position)
            }
            clusterIndex += 1
            position = 0
        }
        current = nil
        currentCount = 0
        return nil
    }

    /// The accessor for one step: the spare, when nothing else references it, otherwise a
    /// new one.
    @inline(__always)
    private func object(key: ObjectKey, cluster: ClusterView?, row: Int) -> Object {
        if recycles, let spare, SoleReference.isSole(spare.toOpaque()) {
            let object = spare.takeUnretainedValue()
            context.rebind(object, key: key, cluster: cluster, row: row)
            return object
        }
        let object = context.materialize(dynamicKey: key, cluster: cluster, row: row)
        if recycles {
            let previous = spare
            spare = Unmanaged.passRetained(object)
            previous?.release()
        }
        return object
    }
}
