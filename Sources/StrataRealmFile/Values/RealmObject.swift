/// One object read from a Realm file: its key and the values of its stored properties.
public struct RealmObject: Sendable, Equatable {
    /// Realm's object key (`ObjKey`): unique within the class, the order Realm iterates in.
    public let key: Int64
    /// The class the object belongs to.
    public let className: String
    /// Property name → value, for every stored (non-computed) property.
    public let values: [String: RealmValue]
    /// The objects that link here, one entry per backlink column Realm keeps for this class.
    public let backlinks: [RealmBacklinks]

    /// An object with its values and backlinks.
    public init(key: Int64, className: String, values: [String: RealmValue], backlinks: [RealmBacklinks]) {
        self.key = key
        self.className = className
        self.values = values
        self.backlinks = backlinks
    }

    /// The value of `property`, or nil if the class has no such stored property.
    public subscript(property: String) -> RealmValue? { values[property] }
}

/// The keys of the objects that link to one object through one link property.
public struct RealmBacklinks: Sendable, Equatable {
    /// The class of the linking objects.
    public let originClass: String
    /// The link property (in `originClass`) the links come through.
    public let originProperty: String
    /// The keys of the linking objects, one per link (an object linking twice appears twice),
    /// in the order Realm stores them.
    public let objectKeys: [Int64]

    /// Backlinks from `originClass.originProperty`.
    public init(originClass: String, originProperty: String, objectKeys: [Int64]) {
        self.originClass = originClass
        self.originProperty = originProperty
        self.objectKeys = objectKeys
    }
}
