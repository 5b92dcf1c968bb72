// The encodings of schemas and subscriptions. Classes and properties keep their declared
// order (arrays), so equal schemas give equal bytes.

extension BinaryWriter {
    /// Appends a schema: its classes, each with name, primary key, embedded-ness and properties.
    public mutating func write(_ schema: SyncSchema) {
        writeCount(schema.classes.count)
        for objectClass in schema.classes {
            writeString(objectClass.name)
            writeString(objectClass.primaryKey)
            writeBool(objectClass.isEmbedded)
            writeCount(objectClass.properties.count)
            for property in objectClass.properties {
                writeString(property.name)
                writeString(property.type)
                writeByte(property.collection.rawValue)
                writeBool(property.isOptional)
                writeOptionalString(property.objectClass)
            }
        }
    }

    /// Appends a subscription: its optional name, class and optional query.
    public mutating func write(_ subscription: SubscriptionSpec) {
        writeOptionalString(subscription.name)
        writeString(subscription.className)
        writeOptionalString(subscription.query)
    }
}

extension BinaryReader {
    /// Reads a schema, refusing an unknown collection kind.
    public mutating func readSchema() throws(SyncProtocolError) -> SyncSchema {
        // Name, primary key, embedded flag, property count.
        let classCount = try readCount("the class count of a schema", minimumElementSize: 4)
        var classes: [SyncClassSchema] = []
        classes.reserveCapacity(classCount)
        for _ in 0 ..< classCount {
            let name = try readString("a class name")
            let primaryKey = try readString("the primary key of class \(name)")
            let isEmbedded = try readBool("whether class \(name) is embedded")
            // Name, type, collection, optional flag, object class flag.
            let propertyCount = try readCount("the property count of class \(name)", minimumElementSize: 5)
            var properties: [SyncPropertySchema] = []
            properties.reserveCapacity(propertyCount)
            for _ in 0 ..< propertyCount {
                let propertyName = try readString("a property name of class \(name)")
                let type = try readString("the type of \(name).\(propertyName)")
                let collectionOffset = offset
                let rawCollection = try readByte("the collection kind of \(name).\(propertyName)")
                guard let collection = SyncPropertySchema.Collection(rawValue: rawCollection) else {
                    throw .malformed("the collection kind of \(name).\(propertyName) at offset \(collectionOffset) is the unknown \(rawCollection)")
                }
                let isOptional = try readBool("whether \(name).\(propertyName) is optional")
                let objectClass = try readOptionalString("the object class of \(name).\(propertyName)")
                properties.append(SyncPropertySchema(name: propertyName, type: type, collection: collection,
                                                     isOptional: isOptional, objectClass: objectClass))
            }
            classes.append(SyncClassSchema(name: name, primaryKey: primaryKey, properties: properties, isEmbedded: isEmbedded))
        }
        return SyncSchema(classes: classes)
    }

    /// Reads a subscription.
    public mutating func readSubscription() throws(SyncProtocolError) -> SubscriptionSpec {
        let name = try readOptionalString("a subscription's name")
        let className = try readString("a subscription's class")
        return SubscriptionSpec(name: name, className: className, query: try readOptionalString("a subscription's query"))
    }
}

extension SyncSchema {
    /// The schema's standalone encoding, for the server's store (deterministic).
    public func encoded() -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(self)
        return writer.bytes
    }

    /// Decodes ``encoded()``'s bytes, refusing malformed or trailing bytes.
    public init(decoding bytes: some Collection<UInt8>) throws(SyncProtocolError) {
        var reader = BinaryReader(bytes)
        self = try reader.readSchema()
        try reader.expectEnd()
    }
}
