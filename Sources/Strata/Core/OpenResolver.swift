// The one step every public open of a configuration runs before the file is touched: a module
// above Strata may install a resolver that turns the configuration the app gave into the one
// to open. StrataRealmCompat installs one that imports a RealmSwift `.realm` file into a Strata
// file beside it and names that file instead (its `RealmFileSwitch`); Strata itself knows
// nothing of Realm files.
import Synchronization

/// A type in a module above Strata that provides an open resolver. Strata finds it by name on
/// the first open when no resolver has been installed yet, so the resolver applies even when
/// an app's first open (an async or actor open, say) runs no code of that module.
package protocol DatabaseOpenResolverProviding {
    /// The module's resolver.
    static var openResolver: DatabaseOpenResolver.Resolve { get }
}

/// The process-wide step that turns the configuration an app opens into the one Strata opens.
///
/// Invariants: at most one resolver is ever installed, and once installed it never changes, so
/// every open form (`init(configuration:queue:)`, the main-actor and actor-isolated async
/// opens, `asyncOpen`) resolves a configuration the same way. The resolver runs on the opening
/// thread before the instance cache is consulted; the configuration it returns is the one the
/// instance keeps (`Database.configuration`), so reopening from it (freezing, thread-safe
/// references) does not resolve again.
package enum DatabaseOpenResolver {
    /// Turns a configuration into the one to open; it may do file work (an import) first and
    /// throws that work's errors, which the open rethrows as they are.
    package typealias Resolve = @Sendable (Database.Configuration) throws -> Database.Configuration

    private struct State {
        var resolve: Resolve?
        /// Whether the by-name lookup of a provider already ran.
        var lookedUp = false
    }

    private static let state = Mutex(State())

    /// The provider types looked up on the first open, by mangled name (the runtime finds a
    /// type by its mangled name, not by `Module.Type`): one per module that may have a
    /// resolver. A type absent from the process (its module not linked) is skipped.
    /// `17StrataRealmCompat31RealmFileSwitchResolverProviderV` is the struct
    /// `StrataRealmCompat.RealmFileSwitchResolverProvider`.
    package static let providerNames = ["17StrataRealmCompat31RealmFileSwitchResolverProviderV"]

    /// Installs `resolve` for every later open in the process. Only the first call installs;
    /// later calls change nothing (a module installs from several entry points).
    package static func install(_ resolve: @escaping Resolve) {
        state.withLock { state in
            if state.resolve == nil { state.resolve = resolve }
        }
    }

    /// `configuration` as the installed resolver turns it, or as it is when none is installed.
    static func resolve(_ configuration: Database.Configuration) throws -> Database.Configuration {
        guard let resolve = installedResolver() else { return configuration }
        return try resolve(configuration)
    }

    private static func installedResolver() -> Resolve? {
        state.withLock { state in
            if state.resolve == nil && !state.lookedUp {
                // Under the lock, so an open racing this one waits for the lookup's outcome.
                state.lookedUp = true
                for name in providerNames {
                    if let provider = _typeByName(name) as? any DatabaseOpenResolverProviding.Type {
                        state.resolve = provider.openResolver
                        break
                    }
                }
            }
            return state.resolve
        }
    }
}

extension DatabaseCore {
    /// Opens `configuration` in `confinement` after the installed resolver has turned it into
    /// the configuration to open (``DatabaseOpenResolver``): the open of every public
    /// `Database` initializer.
    static func open(resolving configuration: Database.Configuration, _ confinement: Confinement) throws -> DatabaseCore {
        try open(DatabaseOpenResolver.resolve(configuration), confinement)
    }
}
