import StrataStore

// MARK: Nested collections in mixed values

extension Query where T == MixedValue {
    /// The element at `position` of the list nested in the mixed value
    /// (`$0.value[0] == 1`); nil when the value holds no list or the list is shorter. A
    /// negative position counts from the end (-1 is the last element).
    public subscript(position: Int) -> Query<MixedValue> {
        Query<MixedValue>(path: path + [MixedPathComponent.component(index: position)], listPrefix: listPrefix, variable: variable)
    }

    /// The value for `key` of the dictionary nested in the mixed value
    /// (`$0.value["theme"] == "dark"`); nil when the value holds no dictionary or the key is
    /// missing.
    public subscript(key: String) -> Query<MixedValue> {
        Query<MixedValue>(path: path + [MapPathComponent.component(forKey: key)], listPrefix: listPrefix, variable: variable)
    }

    /// Every element of the list, or every value of the dictionary, nested in the mixed value
    /// (`$0.value.any == "x"` holds when any of them is `"x"`; string predicates spell it
    /// `value[*]`).
    public var any: Query<MixedValue> {
        let newPath = path + [MixedPathComponent.allComponent]
        return Query<MixedValue>(path: newPath, listPrefix: newPath, variable: variable)
    }
}
