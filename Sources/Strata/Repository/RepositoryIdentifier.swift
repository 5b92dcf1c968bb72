public import Foundation
public import StrataStore

/// A type a ``Repository`` can use as its items' primary key: `String`, `Int`, `UUID` or
/// `ObjectId` (the `id` of an `Identifiable` value).
public protocol RepositoryIdentifier: Hashable, Sendable {
    /// The key's column kind.
    static var _repositoryKind: PropertyKind { get }
    /// The key as the store takes it.
    var _repositoryStored: Any { get }
    /// The key as the store's primary-key lookup takes it.
    var _repositoryStoreValue: StoreValue { get }
}

extension String: RepositoryIdentifier {
    /// Strings are string keys.
    public static var _repositoryKind: PropertyKind { .string }
    /// The string itself.
    public var _repositoryStored: Any { self }
    /// The key as a stored value.
    public var _repositoryStoreValue: StoreValue { .string(self) }
}

extension Int: RepositoryIdentifier {
    /// Integers are integer keys.
    public static var _repositoryKind: PropertyKind { .int }
    /// The integer itself.
    public var _repositoryStored: Any { self }
    /// The key as a stored value.
    public var _repositoryStoreValue: StoreValue { .int(Int64(self)) }
}

extension UUID: RepositoryIdentifier {
    /// UUIDs are UUID keys.
    public static var _repositoryKind: PropertyKind { .uuid }
    /// The UUID itself.
    public var _repositoryStored: Any { self }
    /// The key as a stored value.
    public var _repositoryStoreValue: StoreValue { .uuid(self) }
}

extension ObjectId: RepositoryIdentifier {
    /// ObjectIds are ObjectId keys.
    public static var _repositoryKind: PropertyKind { .objectId }
    /// The ObjectId itself.
    public var _repositoryStored: Any { self }
    /// The key as a stored value.
    public var _repositoryStoreValue: StoreValue { .objectId(self) }
}
