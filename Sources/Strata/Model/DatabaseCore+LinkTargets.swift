// What a dynamic object's link reads as: the model class of its target when this instance
// knows one that fits the file, else a `DynamicObject` of the target's stored type.

extension DatabaseCore {
    /// The context a dynamic object's link to the stored type `name` reads through: the
    /// context of the model class of that name this instance knows (one of
    /// `configuration.objectTypes` when it is set, else any class the process has used) if
    /// the class fits the file's table, else the dynamic context of `name`. nil when the file
    /// has no type of that name.
    func linkTargetContext(named name: String) -> TableContext? {
        if let type = knownModelClass(named: name), let context = try? existingContext(for: type) { return context }
        return try? dynamicContext(named: name)
    }

    /// The model class stored as `name` that this instance's configuration admits: with
    /// `objectTypes`, only those (a process may have other classes of the same file it does
    /// not open this instance with), else any class the process has seen.
    private func knownModelClass(named name: String) -> Object.Type? {
        guard let types = configuration.objectTypes else { return modelClass(named: name) }
        return types.first { (try? ClassInfo.of($0).schema.name) == name }
    }
}
