// Live results of projections: the query results of the root class, each element projected
// when it is read. Queries, sorts and observation go to the root class's results, so they
// name the root's properties; the projection only changes what an element is.

public import Foundation

/// The objects of a projection's root class that match a query, each read as a projection:
/// what `database.objects(PersonProjection.self)` returns. Live and lazy as ``Results`` (which
/// it wraps: ``rootResults``); each element is a new projection of the object at that
/// position. Queries and sorts name the root class's properties (`filter("firstName ==
/// 'Ann'")`, `where { $0.firstName == "Ann" }`, `sorted(by: \Person.firstName)`).
public struct ProjectionResults<Element: ProjectionObservable>: RandomAccessCollection, CustomStringConvertible {
    /// The root objects' results.
    public let rootResults: Results<Element.Root>

    /// The root objects of `results`, projected.
    public init(_ results: Results<Element.Root>) {
        rootResults = results
    }

    /// Always 0.
    public var startIndex: Int { 0 }

    /// The number of matching objects now.
    public var endIndex: Int { rootResults.count }

    /// A projection of the object at `position`.
    public subscript(position: Int) -> Element { Element(projecting: rootResults[position]) }

    /// The database instance the results read.
    public var database: Database { rootResults.database }

    /// Whether the results can no longer be read (see ``Results/isInvalidated``).
    public var isInvalidated: Bool { rootResults.isInvalidated }

    /// Whether the results read a frozen version.
    public var isFrozen: Bool { rootResults.isFrozen }

    /// The position of the projection's object in the results, or nil.
    public func index(of projection: Element) -> Int? { rootResults.index(of: projection.rootObject) }

    /// The results that also match a string predicate over the root class's properties; see
    /// ``Results/filter(_:_:)``.
    public func filter(_ format: String, _ arguments: Any...) -> ProjectionResults<Element> {
        do {
            return ProjectionResults(try rootResults.filter(FilterPredicate(format, argumentArray: arguments)))
        } catch {
            fatalError("\(error)")
        }
    }

    /// The results that also match a parsed string predicate; throws when it names a property
    /// the root class does not have.
    public func filter(_ predicate: FilterPredicate) throws(QueryError) -> ProjectionResults<Element> {
        ProjectionResults(try rootResults.filter(predicate))
    }

    /// The results that also match a typed query over the root class.
    public func `where`(_ isIncluded: (Query<Element.Root>) -> Query<Bool>) -> ProjectionResults<Element> {
        ProjectionResults(rootResults.where(isIncluded))
    }

    /// The results sorted by a root property (or a key path through links).
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> ProjectionResults<Element> {
        ProjectionResults(rootResults.sorted(byKeyPath: keyPath, ascending: ascending))
    }

    /// The results sorted by a key path of the root class.
    public func sorted<V>(by keyPath: KeyPath<Element.Root, V>, ascending: Bool = true) -> ProjectionResults<Element> {
        ProjectionResults(rootResults.sorted(by: keyPath, ascending: ascending))
    }

    /// The results sorted by several root key paths, the first deciding first.
    public func sorted<S: Sequence>(by descriptors: S) -> ProjectionResults<Element> where S.Element == SortDescriptor {
        ProjectionResults(rootResults.sorted(by: descriptors))
    }

    /// The results as of the version the database reads now, readable from any thread.
    public func freeze() -> ProjectionResults<Element> { ProjectionResults(rootResults.freeze()) }

    /// The live results of frozen results, in the caller's context; nil when they cannot be
    /// found again there (see ``Results/thaw(_isolation:)``).
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> ProjectionResults<Element>? {
        guard let live = rootResults.thaw() else { return nil }
        return ProjectionResults(live)
    }

    /// Calls `block` with the results now (`.initial`) and after each commit that changes them
    /// (`.update`), with the indices of the projections that left, arrived and changed. Without
    /// `keyPaths`, only changes to root properties that the projection's properties read count
    /// as modifications; `keyPaths` names root key paths (`"firstName"`) or projected
    /// properties (`"name"`). See `Results.observe(keyPaths:on:_:)` for delivery.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<ProjectionResults<Element>>) -> Void) -> NotificationToken {
        let paths = projectedKeyPaths(keyPaths)
        return rootResults.observe(keyPaths: paths, on: queue) { change in
            switch change {
            case .initial(let results):
                block(.initial(ProjectionResults(results)))
            case .update(let results, let deletions, let insertions, let modifications):
                block(.update(ProjectionResults(results), deletions: deletions, insertions: insertions, modifications: modifications))
            case .error(let error):
                block(.error(error))
            }
        }
    }

    /// The root key paths to observe: those `keyPaths` names (projected property names turned
    /// into the root key paths they read), or every key path the projection reads.
    private func projectedKeyPaths(_ keyPaths: [String]?) -> [String] {
        let schema = ProjectionSchema.of(Element.self)
        guard let keyPaths, !keyPaths.isEmpty else { return schema.properties.map(\.originPath) }
        return keyPaths.map { path in schema.properties.first { $0.label == path }?.originPath ?? path }
    }

    /// The projections, one per line.
    public var description: String {
        "ProjectionResults<\(Element.self)> [\n" + map { "\t\($0)" }.joined(separator: ",\n") + "\n]"
    }
}

extension Database {
    /// Every object of the projection's root class, projected: `objects(PersonProjection.self)`.
    /// See ``ProjectionResults``.
    public func objects<P: ProjectionObservable>(_ type: P.Type) -> ProjectionResults<P> {
        ProjectionResults(objects(P.Root.self))
    }
}
